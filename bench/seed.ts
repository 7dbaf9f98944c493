// Seeds N user groups through the store's batch path (applyUserGroupWrites per batch: one transaction per
// batch, one audit event per group, exactly what an import writes), not through HTTP. On a kept database
// (databases.ts) it writes only the batches a previous run did not, so a load continues where it stopped.
import { createHmac } from 'node:crypto';
import type { JsonObject } from '../src/domain/common.records.js';
import type { MappingEntry } from '../src/domain/user-groups/user-group.records.js';
import { generateUserGroupToken, hashSecret, USER_GROUP_TOKEN_PREFIX } from '../src/domain/secrets.js';
import type { Caller, Tenant } from '../src/domain/tenancy.js';
import { wholeGroupChanges } from '../src/domain/user-groups/user-group-diff.rules.js';
import { openRuntime } from '../src/runtime.js';
import type { UserGroupWrite } from '../src/domain/user-groups/user-groups.port.js';
import type { BenchDatabase, KeptSetup } from './databases.js';

/** What the scenarios need to know about the seeded data. */
export interface Seeded {
  /** A `write` API token of the Customer environment. */
  apiToken: string;
  /** An `admin` API token of the Customer environment (webhook endpoints need one). */
  adminToken: string;
  /** Mapping every seeded group has, as a request names it: schema id → data source provided id. */
  mappingInput: Record<string, string>;
  /** An evenly spread sample of the groups: index i is the same group in every array. */
  ids: string[];
  names: string[];
  tokens: string[];
  /** The team_ids of the sample's first SAMPLED_TEAM_IDS groups (the admin scenarios ask by team_id). */
  teamIds: number[];
  /** The deepest groups of the 4-level chains seeded for `get-nested` (empty when it does not run). */
  nestedIds: string[];
  /** Groups of 64 short access rules each, seeded for `embed-token-rules` (empty when it does not run). */
  ruledIds: string[];
  /**
   * Seconds this run spent writing groups, and the groups it wrote (fewer than `groups` when a kept
   * load resumed); the groups there (fewer than the size as loaded).
   */
  seconds: number;
  written: number;
  groups: number;
  /** Groups per batch: --seed-batch, or a kept database's first load's. */
  batch: number;
}

/** Sampled groups whose team_id the admin scenarios get. */
export const SAMPLED_TEAM_IDS = 1000;

/** Chains of four levels seeded beside the flat groups when `get-nested` runs. */
export const NESTED_CHAINS = 1000;
const NESTED_LEVELS = 4;
/** Groups seeded for `embed-token-rules`, and the rules each owns (the most a group may). */
export const RULED_GROUPS = 1000;
const RULES_PER_GROUP = 64;

const PLANS = ['free', 'pro', 'enterprise'];
const REGIONS = ['eu', 'us', 'ap', 'sa'];

export const groupId = (i: number) => `grp-${i}`;
export const groupName = (i: number) => `Group ${i}`;
/** One of 100 tags, 1 % of the groups each (admin-tag-filter). */
export const groupTag = (i: number) => `t${i % 100}`;
/**
 * Group i's first token, derived from the database's seed rather than drawn: tokens are stored only
 * hashed and encrypted, and a later run on a kept database needs its sample's again.
 */
const groupToken = (seed: string, i: number) =>
  USER_GROUP_TOKEN_PREFIX + createHmac('sha256', seed).update(groupId(i)).digest('hex');
export const groupProperties = (i: number): JsonObject => ({
  plan: PLANS[i % PLANS.length]!,
  region: REGIONS[i % REGIONS.length]!,
  seats: (i % 50) + 1,
});

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export async function seed(
  db: BenchDatabase,
  size: number,
  options: { batch: number; parallel: number; sample: number; nested: boolean; ruled: boolean; asLoaded?: boolean },
): Promise<Seeded> {
  const parallel = db.engine === 'postgres' ? options.parallel : 1;
  const runtime = await openRuntime({ databaseUrl: db.url, encryptionKey: db.encryptionKey, poolSize: parallel + 1 });
  try {
    // The same key the server will load: the SQLite key file openRuntime just created, or UGS_ENCRYPTION_KEY.
    const cipher = runtime.keys.keyring;
    const tenant: Tenant = { workspaceId: runtime.defaultWorkspace.id, environment: 'Customer' };
    const admin: Caller = { tenant, scope: 'admin', actor: { type: 'cli' }, requestId: null };
    const { services, store } = runtime;
    const setup = db.setup ?? (await createSetup());
    db.saveSetup(setup);
    const { apiToken: secret, adminToken, schemaId } = setup;
    const mapping: MappingEntry[] = [{ schemaId, dataSourceId: setup.dataSourceId }];

    // A kept database is loaded in the batches of its first load, whatever --seed-batch says now:
    // a batch is one transaction, so its first group tells whether all of it is there.
    const batch = setup.seedBatch;
    const batches = Math.ceil(size / batch);
    const audit = { at: new Date().toISOString(), actor: { type: 'cli' as const }, requestId: null };
    /** A new group as one write of a batch: its token stored as the service stores one, its creation audited. */
    const createWrite = (
      content: Parameters<typeof wholeGroupChanges>[0],
      token: string,
      createdAt: string,
    ): UserGroupWrite => ({
      kind: 'create',
      group: {
        tenant,
        ...content,
        tokenHash: hashSecret(token),
        tokenCiphertext: cipher.encrypt(token),
        createdAt,
      },
      changes: wholeGroupChanges(content, true),
    });

    const writeBatch = async (b: number) => {
      const first = b * batch + 1;
      const last = Math.min(size, first + batch - 1);
      const writes: UserGroupWrite[] = [];
      const createdAt = new Date().toISOString();
      for (let i = first; i <= last; i += 1) {
        const content = {
          providedId: groupId(i),
          name: groupName(i),
          properties: groupProperties(i),
          mapping,
          parentProvidedId: null,
          isDemoGroup: false,
          tags: [groupTag(i)],
          accessRules: [],
        };
        writes.push(createWrite(content, groupToken(db.tokenSeed, i), createdAt));
      }
      await store.applyUserGroupWrites(tenant, writes, audit, { policy: 'per_batch' });
      return last - first + 1;
    };

    const absent = db.kept ? await missingBatches(batches) : Array.from({ length: batches }, (_, b) => b);
    if (absent.length < batches)
      log(`  resuming: ${batches - absent.length} of ${batches} batches of ${batch} already loaded`);
    const groupsOf = (batches: number[]) => batches.reduce((sum, b) => sum + Math.min(batch, size - b * batch), 0);
    // As loaded: nothing written, and the sample drawn from the batches there.
    const missing = options.asLoaded ? [] : absent;
    const notThere = new Set(options.asLoaded ? absent : []);
    const toWrite = groupsOf(missing);
    const started = performance.now();
    let next = 0;
    let done = 0;
    let written = 0;
    let reported = 0;
    // Every 10 % of the load, every 1 % of a long one.
    const step = missing.length >= 200 ? 1 : 10;
    const worker = async () => {
      while (next < missing.length) {
        const b = missing[next]!;
        next += 1;
        // Read `written` after the write: `written += await …` would add to the value before it, losing the other workers' batches.
        const count = await writeBatch(b);
        written += count;
        done += 1;
        const percent = Math.floor((done / missing.length) * (100 / step)) * step;
        if (percent > reported && missing.length >= 10) {
          reported = percent;
          const seconds = (performance.now() - started) / 1000;
          log(
            `  seeded ${written} / ${toWrite}${toWrite < size ? ` missing of ${size}` : ''} (${seconds.toFixed(1)} s, ${Math.round(written / seconds)} groups/s, ${new Date().toISOString()})`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, missing.length) }, worker));
    const seconds = (performance.now() - started) / 1000;

    // The sample is every stride-th group, its tokens derived again: the same for a load in one run or many.
    const stride = Math.max(1, Math.floor(size / options.sample));
    const sample: Pick<Seeded, 'ids' | 'names' | 'tokens'> = { ids: [], names: [], tokens: [] };
    for (let i = stride; i <= size && sample.ids.length < options.sample; i += stride) {
      if (notThere.has(Math.floor((i - 1) / batch))) continue;
      sample.ids.push(groupId(i));
      sample.names.push(groupName(i));
      sample.tokens.push(groupToken(db.tokenSeed, i));
    }

    const nestedIds = options.nested ? await seedChains() : [];
    const ruledIds = options.ruled ? await seedRuled() : [];

    // Spread the sample so neighbouring requests do not hit neighbouring rows.
    shuffleTogether([sample.ids, sample.names, sample.tokens]);
    shuffleTogether([nestedIds]);
    shuffleTogether([ruledIds]);
    const teamIds = (await store.findUserGroupsByProvidedIds(tenant, sample.ids.slice(0, SAMPLED_TEAM_IDS))).map(
      (group) => group.teamId,
    );
    return {
      teamIds,
      apiToken: secret,
      adminToken,
      mappingInput: { [String(schemaId)]: setup.dataSourceProvidedId },
      ...sample,
      nestedIds,
      ruledIds,
      seconds,
      written,
      groups: size - groupsOf([...notThere]),
      batch,
    };

    /** The batches whose first group is not there yet, asked 1 000 at a time. */
    async function missingBatches(count: number): Promise<number[]> {
      const missing: number[] = [];
      for (let from = 0; from < count; from += 1000) {
        const wanted = Array.from({ length: Math.min(1000, count - from) }, (_, k) => from + k);
        const present = new Set(
          (
            await store.findUserGroupsByProvidedIds(
              tenant,
              wanted.map((b) => groupId(b * batch + 1)),
            )
          ).map((group) => group.providedId),
        );
        missing.push(...wanted.filter((b) => !present.has(groupId(b * batch + 1))));
      }
      return missing;
    }

    /** Whether a kept database has `providedId` already (its extra groups were written in one transaction). */
    async function loaded(providedId: string): Promise<boolean> {
      return db.kept && (await store.findUserGroupsByProvidedIds(tenant, [providedId])).length === 1;
    }

    /** A `write` and an `admin` API token, a schema and a data source, made through the services. */
    async function createSetup(): Promise<KeptSetup> {
      const write = await services.apiTokens.createApiToken(admin, {
        name: 'bench',
        scope: 'write',
        environment: 'Customer',
      });
      const adminSecret = await services.apiTokens.createApiToken(admin, {
        name: 'bench admin',
        scope: 'admin',
        environment: 'Customer',
      });
      const schema = await services.schemas.createSchema(admin, { name: 'bench' });
      const dataSource = await services.dataSources.createDataSource(admin, {
        providedId: 'bench_warehouse',
        name: 'Bench warehouse',
        schemaId: schema.id,
      });
      return {
        apiToken: write.secret,
        adminToken: adminSecret.secret,
        schemaId: schema.id,
        dataSourceId: dataSource.id,
        dataSourceProvidedId: dataSource.providedId,
        seedBatch: options.batch,
      };
    }

    /**
     * Groups with the most rules a group may own (64), short ones (docs/api.md#access-rules): an integer comparison,
     * a short list and a property reference in turn, so that minting resolves references too.
     */
    async function seedRuled(): Promise<string[]> {
      const createdAt = new Date().toISOString();
      const writes: UserGroupWrite[] = [];
      const ids = Array.from({ length: RULED_GROUPS }, (_, i) => `ruled-${i}`);
      if (await loaded(ids[0]!)) return ids;
      for (let i = 0; i < RULED_GROUPS; i += 1) {
        const token = generateUserGroupToken();
        const ops = ['eq', 'in', 'eq'] as const;
        const content = {
          providedId: `ruled-${i}`,
          name: `Ruled ${i}`,
          properties: groupProperties(i),
          mapping,
          parentProvidedId: null,
          isDemoGroup: false,
          tags: [],
          accessRules: Array.from({ length: RULES_PER_GROUP }, (_, k) => ({
            schema_id: schemaId,
            table: 'orders',
            column: `c${k}`,
            op: ops[k % 3]!,
            value: k % 3 === 0 ? k : k % 3 === 1 ? ['a', 'b'] : { property: 'region' },
          })),
        };
        writes.push(createWrite(content, token, createdAt));
      }
      await store.applyUserGroupWrites(tenant, writes, audit, { policy: 'per_batch' });
      return ids;
    }

    /** Root to leaf, chain by chain, in one batch: each level's properties and the root's mapping are inherited below. */
    async function seedChains(): Promise<string[]> {
      const createdAt = new Date().toISOString();
      const writes: UserGroupWrite[] = [];
      const leaves = Array.from({ length: NESTED_CHAINS }, (_, chain) => `tree-${chain}-${NESTED_LEVELS}`);
      if (await loaded(leaves[0]!)) return leaves;
      for (let chain = 0; chain < NESTED_CHAINS; chain += 1) {
        for (let level = 1; level <= NESTED_LEVELS; level += 1) {
          const token = generateUserGroupToken();
          const content = {
            providedId: `tree-${chain}-${level}`,
            name: `Tree ${chain} level ${level}`,
            properties: { ...groupProperties(chain * NESTED_LEVELS + level), [`level${level}`]: true },
            mapping: level === 1 ? mapping : [],
            parentProvidedId: level === 1 ? null : `tree-${chain}-${level - 1}`,
            isDemoGroup: false,
            tags: [],
            accessRules: [],
          };
          writes.push(createWrite(content, token, createdAt));
        }
      }
      await store.applyUserGroupWrites(tenant, writes, audit, { policy: 'per_batch' });
      return leaves;
    }
  } finally {
    await runtime.close();
  }
}

/** Fisher–Yates with a fixed seed, applying the same permutation to every array. */
function shuffleTogether(arrays: unknown[][]): void {
  let state = 0x9e3779b9;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const length = arrays[0]?.length ?? 0;
  for (let i = length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    for (const array of arrays) [array[i], array[j]] = [array[j], array[i]];
  }
}
