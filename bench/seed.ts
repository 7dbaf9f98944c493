// Seeds N user groups through the store's batch path (applyUserGroupWrites per batch: one transaction per batch,
// one audit event per group, exactly what an import writes), not through HTTP.
import type { JsonObject } from '../src/domain/common.records.js';
import type { MappingEntry } from '../src/domain/user-groups/user-group.records.js';
import { generateUserGroupToken, hashSecret } from '../src/domain/secrets.js';
import type { Caller, Tenant } from '../src/domain/tenancy.js';
import { wholeGroupChanges } from '../src/domain/user-groups/user-group-diff.rules.js';
import { openRuntime } from '../src/runtime.js';
import type { UserGroupWrite } from '../src/domain/user-groups/user-groups.port.js';
import type { BenchDatabase } from './databases.js';

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
  /** The deepest groups of the 4-level chains seeded for `get-nested` (empty when it does not run). */
  nestedIds: string[];
  /** Groups of 64 short access rules each, seeded for `embed-token-rules` (empty when it does not run). */
  ruledIds: string[];
  seconds: number;
  groups: number;
}

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
  options: { batch: number; parallel: number; sample: number; nested: boolean; ruled: boolean },
): Promise<Seeded> {
  const parallel = db.engine === 'postgres' ? options.parallel : 1;
  const runtime = await openRuntime({ databaseUrl: db.url, encryptionKey: db.encryptionKey, poolSize: parallel + 1 });
  try {
    // The same key the server will load: the SQLite key file openRuntime just created, or UGS_ENCRYPTION_KEY.
    const cipher = runtime.keys.keyring;
    const tenant: Tenant = { workspaceId: runtime.defaultWorkspace.id, environment: 'Customer' };
    const admin: Caller = { tenant, scope: 'admin', actor: { type: 'cli' }, requestId: null };
    const { services, store } = runtime;
    const { secret } = await services.apiTokens.createApiToken(admin, {
      name: 'bench',
      scope: 'write',
      environment: 'Customer',
    });
    const adminToken = (
      await services.apiTokens.createApiToken(admin, { name: 'bench admin', scope: 'admin', environment: 'Customer' })
    ).secret;
    const schema = await services.schemas.createSchema(admin, { name: 'bench' });
    const dataSource = await services.dataSources.createDataSource(admin, {
      providedId: 'bench_warehouse',
      name: 'Bench warehouse',
      schemaId: schema.id,
    });
    const mapping: MappingEntry[] = [{ schemaId: schema.id, dataSourceId: dataSource.id }];

    const stride = Math.max(1, Math.floor(size / options.sample));
    const sample: Pick<Seeded, 'ids' | 'names' | 'tokens'> = { ids: [], names: [], tokens: [] };
    const batches = Math.ceil(size / options.batch);
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
      const first = b * options.batch + 1;
      const last = Math.min(size, first + options.batch - 1);
      const writes: UserGroupWrite[] = [];
      const createdAt = new Date().toISOString();
      for (let i = first; i <= last; i += 1) {
        const token = generateUserGroupToken();
        const content = {
          providedId: groupId(i),
          name: groupName(i),
          properties: groupProperties(i),
          mapping,
          parentProvidedId: null,
          isDemoGroup: false,
          tags: [],
          accessRules: [],
        };
        writes.push(createWrite(content, token, createdAt));
        if (i % stride === 0 && sample.ids.length < options.sample) {
          sample.ids.push(content.providedId);
          sample.names.push(content.name);
          sample.tokens.push(token);
        }
      }
      await store.applyUserGroupWrites(tenant, writes, audit, { policy: 'per_batch' });
    };

    const started = performance.now();
    let next = 0;
    let done = 0;
    let reported = 0;
    const worker = async () => {
      while (next < batches) {
        const b = next;
        next += 1;
        await writeBatch(b);
        done += 1;
        const percent = Math.floor((done / batches) * 10) * 10;
        if (percent > reported && batches >= 10) {
          reported = percent;
          log(
            `  seeded ${Math.min(size, done * options.batch)} / ${size} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, batches) }, worker));
    const seconds = (performance.now() - started) / 1000;

    const nestedIds = options.nested ? await seedChains() : [];
    const ruledIds = options.ruled ? await seedRuled() : [];

    // Spread the sample so neighbouring requests do not hit neighbouring rows.
    shuffleTogether([sample.ids, sample.names, sample.tokens]);
    shuffleTogether([nestedIds]);
    shuffleTogether([ruledIds]);
    return {
      apiToken: secret,
      adminToken,
      mappingInput: { [String(schema.id)]: dataSource.providedId },
      ...sample,
      nestedIds,
      ruledIds,
      seconds,
      groups: size,
    };

    /**
     * Groups with the most rules a group may own (64), short ones (docs/api.md#access-rules): an integer comparison,
     * a short list and a property reference in turn, so that minting resolves references too.
     */
    async function seedRuled(): Promise<string[]> {
      const createdAt = new Date().toISOString();
      const writes: UserGroupWrite[] = [];
      const ids: string[] = [];
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
            schema_id: schema.id,
            table: 'orders',
            column: `c${k}`,
            op: ops[k % 3]!,
            value: k % 3 === 0 ? k : k % 3 === 1 ? ['a', 'b'] : { property: 'region' },
          })),
        };
        writes.push(createWrite(content, token, createdAt));
        ids.push(content.providedId);
      }
      await store.applyUserGroupWrites(tenant, writes, audit, { policy: 'per_batch' });
      return ids;
    }

    /** Root to leaf, chain by chain, in one batch: each level's properties and the root's mapping are inherited below. */
    async function seedChains(): Promise<string[]> {
      const createdAt = new Date().toISOString();
      const writes: UserGroupWrite[] = [];
      const leaves: string[] = [];
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
        leaves.push(`tree-${chain}-${NESTED_LEVELS}`);
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
