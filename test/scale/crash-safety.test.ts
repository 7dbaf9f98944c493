// Crash safety on both engines: `ugs serve` killed with SIGKILL under concurrent writes, restarted on
// the same database, keeps every acknowledged change, leaves each group in one consistent state and
// writes exactly one audit event per change that applied, and exactly one webhook event per audit
// event, each of which a receiver on loopback gets at least once, though deliveries are cut off by
// the kills too (docs/api.md#webhooks). `npm run test:crash` runs this file alone.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ApiRequest } from '../support/http-client.js';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase, type TestEngine } from '../support/test-database.js';
import { listAll } from '../support/paged-list.js';
import { everyDeliveryReceived, socketReader, useWebhookScaleFixture, waitFor, WEBHOOK_SERVE_ENV } from './helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { call } from '../support/http-client.js';

const ROUNDS = 3;
/** Concurrent clients; each writes its own groups one request at a time, so per-group order is plain. */
const LANES = 8;
/** After its create, a group gets this many writes: updates and rotations in turn. */
const WRITES_PER_GROUP = 6;
/** A round runs at least this long and until at least this many writes were acknowledged, then the kill. */
const ROUND_MS = 1_500;
const MIN_ACKNOWLEDGED_PER_ROUND = 40;
/** How many checking requests run at once after a restart. */
const CHECK_CONCURRENCY = 8;

type WriteKind = 'create' | 'update' | 'rotate';

interface Write {
  kind: WriteKind;
  requestId: string;
  /** create and update: the name and properties they write (every update's are unique). */
  name?: string;
  properties?: Record<string, unknown>;
  /** rotate: the token it rotates away. */
  currentToken?: string;
  /** Only once a 2xx response was received in full: the group as it answered. */
  acknowledged?: { teamId: number; token: string };
  /** A response that was not a 2xx (none is expected: the test fails on it). */
  refused?: string;
}

interface GroupLog {
  providedId: string;
  /** In the order sent; only the last one can be unacknowledged (its lane stopped there). */
  writes: Write[];
}

const ACTIONS: Record<WriteKind, string> = {
  create: 'user_group.created',
  update: 'user_group.updated',
  rotate: 'user_group.token_rotated',
};

const acknowledged = (writes: Write[]) => writes.filter((write) => write.acknowledged !== undefined);

/** The group's token after its last acknowledged write. */
function lastKnownToken(group: GroupLog): string | undefined {
  return acknowledged(group.writes).at(-1)?.acknowledged?.token;
}

/** Name and properties after the last acknowledged create or update. */
function lastKnownContent(group: GroupLog): Pick<Write, 'name' | 'properties'> | undefined {
  return acknowledged(group.writes)
    .filter((write) => write.kind !== 'rotate')
    .at(-1);
}

class Workload {
  readonly groups: GroupLog[] = [];
  private stopping = false;
  private sequence = 0;

  constructor(
    private readonly server: ServeProcess,
    private readonly adminToken: string,
    private readonly label: string,
  ) {}

  get acknowledgedCount(): number {
    return this.groups.reduce((sum, group) => sum + acknowledged(group.writes).length, 0);
  }

  /** One sequential client per lane, until stop(); resolves once every lane has stopped. */
  run(): Promise<void> {
    return Promise.all(Array.from({ length: LANES }, (_, lane) => this.runLane(lane))).then(() => undefined);
  }

  /** No lane starts another request; the ones under way finish or fail on their own. */
  stop(): void {
    this.stopping = true;
  }

  /** The writes that got no answer: in flight when the server died. */
  inFlight(): Write[] {
    return this.groups.flatMap((group) => group.writes).filter((write) => !write.acknowledged && !write.refused);
  }

  private async runLane(lane: number): Promise<void> {
    while (!this.stopping) {
      const group: GroupLog = {
        providedId: `crash_${this.label}_l${lane}_${randomBytes(4).toString('hex')}`,
        writes: [],
      };
      this.groups.push(group);
      if (!(await this.send(group, this.contentWrite(group, 'create', 0)))) return;
      for (let step = 1; step <= WRITES_PER_GROUP && !this.stopping; step++) {
        const write =
          step % 2 === 1
            ? this.contentWrite(group, 'update', step)
            : { kind: 'rotate' as const, requestId: this.requestId(), currentToken: lastKnownToken(group)! };
        if (!(await this.send(group, write))) return;
      }
    }
  }

  private requestId(): string {
    return `crash-${this.label}-${++this.sequence}`;
  }

  private contentWrite(group: GroupLog, kind: 'create' | 'update', step: number): Write {
    return {
      kind,
      requestId: this.requestId(),
      name: `${group.providedId} v${step}`,
      properties: { step, filler: 'x'.repeat(64 * (step + 1)) },
    };
  }

  /** Sends one write and records its outcome; false when it got no full 2xx answer (the lane stops). */
  private async send(group: GroupLog, write: Write): Promise<boolean> {
    group.writes.push(write);
    const request: ApiRequest = {
      create: {
        method: 'GET',
        path: '/api/user',
        body: { user_group_id: group.providedId, name: write.name, properties: write.properties },
      },
      update: {
        method: 'PUT',
        path: '/api/user',
        body: { user_group_id: group.providedId, name: write.name, properties: write.properties },
      },
      rotate: { method: 'POST', path: '/api/user', body: { current_token: write.currentToken } },
    }[write.kind];
    try {
      const response = await call(this.server, {
        ...request,
        token: this.adminToken,
        headers: { 'x-request-id': write.requestId },
      });
      if (response.status === 200 && !(write.kind === 'create' && response.body.new_user_group !== true)) {
        write.acknowledged = { teamId: response.body.user_group.team_id, token: response.body.user_group.token };
        return true;
      }
      write.refused = `${response.status} ${response.raw}`;
    } catch {
      // No complete answer: the server died with this request in flight; it may have applied or not.
    }
    return false;
  }
}

interface AuditEvent {
  action: string;
  team_id: number | null;
  request_id: string | null;
}

function groupBy<K, T>(items: T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

/** Runs `check` over `items`, CHECK_CONCURRENCY at a time. */
async function inBatches<T>(items: T[], check: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += CHECK_CONCURRENCY) {
    await Promise.all(items.slice(start, start + CHECK_CONCURRENCY).map(check));
  }
}

interface StoredGroup {
  team_id: number;
  provided_id: string;
  name: string;
  token: string;
  properties: Record<string, unknown> | null;
}

/**
 * The checks after a restart, for every group written so far: what was acknowledged is there, the
 * write in flight applied whole or not at all, the stored token is the one its hash finds, every
 * token rotated away is refused, and the audit trail holds one event per applied write. Returns the
 * request ids of the writes in flight that applied.
 */
async function checkGroups(server: ServeProcess, adminToken: string, groups: GroupLog[]): Promise<Set<string>> {
  const appliedInFlight = new Set<string>();
  const stored = new Map(
    (await listAll<StoredGroup>(socketReader(server, adminToken), '/api/admin/user_groups', 'user_groups')).map(
      (group) => [group.provided_id, group],
    ),
  );
  const events = await listAll<AuditEvent>(socketReader(server, adminToken), '/api/admin/audit_events', 'audit_events');
  const eventsByRequest = groupBy(events, (event) => event.request_id);
  const eventsByTeam = groupBy(events, (event) => event.team_id);

  await inBatches(groups, async (group) => {
    const what = `group ${group.providedId}`;
    const refused = group.writes.filter((write) => write.refused !== undefined);
    expect(
      refused.map((write) => `${write.kind}: ${write.refused}`),
      what,
    ).toEqual([]);
    const last = group.writes.at(-1)!;
    const inFlight = last.acknowledged ? undefined : last;
    const found = stored.get(group.providedId);

    if (found === undefined) {
      // Only a create that never got its answer may have left nothing behind, and no event either.
      expect(inFlight?.kind, `${what}: missing, yet its create was acknowledged`).toBe('create');
      expect(eventsByRequest.get(inFlight!.requestId), what).toBeUndefined();
      return;
    }

    const ours = await call(server, {
      method: 'GET',
      path: '/api/user',
      token: adminToken,
      body: { user_group_id: group.providedId },
    });
    expect(ours.status, ours.raw).toBe(200);
    expect(ours.body.new_user_group, what).toBe(false);
    const current: StoredGroup = ours.body.user_group;
    expect(found, `${what}: the admin list and get-or-create disagree`).toEqual(current);
    const teamId = group.writes[0]!.acknowledged?.teamId ?? current.team_id;
    expect(current.team_id, what).toBe(teamId);

    // Did the write in flight apply? Then the group shows exactly its result; else the last acknowledged one.
    let inFlightApplied = false;
    if (inFlight?.kind === 'create') inFlightApplied = true;
    if (inFlight?.kind === 'update') inFlightApplied = current.name === inFlight.name;
    if (inFlight?.kind === 'rotate') inFlightApplied = current.token !== lastKnownToken(group);
    const content = inFlight?.kind !== 'rotate' && inFlightApplied ? inFlight! : lastKnownContent(group);
    expect({ name: current.name, properties: current.properties }, what).toEqual({
      name: content?.name,
      properties: content?.properties,
    });
    if (inFlight && inFlightApplied) appliedInFlight.add(inFlight.requestId);
    const rotatedInFlight = inFlight?.kind === 'rotate' && inFlightApplied;
    if (!rotatedInFlight && lastKnownToken(group) !== undefined)
      expect(current.token, `${what}: token`).toBe(lastKnownToken(group));

    // The token get-or-create decrypts is the one its stored hash finds; every earlier one is dead.
    const verified = await call(server, {
      method: 'POST',
      path: '/api/user/verify',
      token: adminToken,
      body: { token: current.token },
    });
    expect(
      { status: verified.status, teamId: verified.body?.user_group?.team_id },
      `${what}: its current token verifies`,
    ).toEqual({ status: 200, teamId });
    const earlierTokens = new Set(
      group.writes
        .flatMap((write) => [write.acknowledged?.token, write.currentToken])
        .filter((token) => token !== undefined && token !== current.token),
    );
    for (const token of earlierTokens) {
      const refusedToken = await call(server, {
        method: 'POST',
        path: '/api/user/verify',
        token: adminToken,
        body: { token },
      });
      expect(refusedToken.status, `${what}: a token rotated away still verifies`).toBe(404);
    }

    // One audit event per applied write, carrying its request id; none for a write that did not apply.
    const applied = inFlight && !inFlightApplied ? group.writes.slice(0, -1) : group.writes;
    for (const write of applied) {
      expect(
        (eventsByRequest.get(write.requestId) ?? []).map((event) => ({ action: event.action, team_id: event.team_id })),
        `${what}: audit events of ${write.kind} ${write.requestId}`,
      ).toEqual([{ action: ACTIONS[write.kind], team_id: teamId }]);
    }
    if (inFlight && !inFlightApplied)
      expect(eventsByRequest.get(inFlight.requestId), `${what}: event of a write that did not apply`).toBeUndefined();
    expect(eventsByTeam.get(teamId)?.length, `${what}: audit events in all`).toBe(applied.length);
  });
  return appliedInFlight;
}

/** SQLite: the files as the kill left them, copied aside (no -shm, as after a power cut) and checked. */
function checkSqliteImage(db: TestDatabase): void {
  const image = mkdtempSync(join(db.dir, 'image-'));
  try {
    for (const suffix of ['', '-wal']) {
      if (existsSync(`${db.sqlitePath}${suffix}`))
        copyFileSync(`${db.sqlitePath}${suffix}`, join(image, `ugs.db${suffix}`));
    }
    checkSqliteFile(join(image, 'ugs.db'));
  } finally {
    rmSync(image, { recursive: true, force: true });
  }
}

function checkSqliteFile(path: string): void {
  const file = new Database(path, { fileMustExist: true });
  try {
    expect(file.pragma('integrity_check', { simple: true }), `integrity_check of ${path}`).toBe('ok');
    expect(file.pragma('foreign_key_check'), `foreign_key_check of ${path}`).toEqual([]);
  } finally {
    file.close();
  }
}

/**
 * After the last restart: one webhook event per audit event of every group (so per applied change:
 * the audit checks above tie those to the acknowledged writes), in the same order, and the receiver
 * has had every one of them at least once.
 */
async function checkWebhooks(
  server: ServeProcess,
  adminToken: string,
  receiver: WebhookReceiver,
): Promise<{ events: number; duplicates: number }> {
  const deliveries = await everyDeliveryReceived(server, adminToken, receiver);
  const audit = (await listAll<AuditEvent>(socketReader(server, adminToken), '/api/admin/audit_events', 'audit_events'))
    .filter((event) => event.action.startsWith('user_group.'))
    .reverse();
  const firstArrivals = new Map<string, { type: string; teamId: number }>();
  for (const entry of receiver.received) {
    if (!firstArrivals.has(entry.json.id))
      firstArrivals.set(entry.json.id, { type: entry.json.type, teamId: entry.json.data.user_group.team_id });
  }
  expect(new Set(deliveries.map((delivery) => delivery.event_id)).size, 'one delivery per event').toBe(
    deliveries.length,
  );
  expect(deliveries.length, 'one webhook event per audited change').toBe(audit.length);
  const auditedByTeam = groupBy(audit, (event) => event.team_id);
  const announcedByTeam = groupBy([...firstArrivals.values()], (event): number | null => event.teamId);
  for (const [teamId, events] of auditedByTeam) {
    expect(
      announcedByTeam.get(teamId)?.map((event) => event.type),
      `webhook events of team ${teamId}, in order`,
    ).toEqual(events.map((event) => event.action));
  }
  return { events: deliveries.length, duplicates: receiver.received.length - firstArrivals.size };
}

describe.each(['sqlite', 'postgres'] as const)('SIGKILL under concurrent writes on %s', (engine: TestEngine) => {
  const fixture = useWebhookScaleFixture();

  it(`keeps every acknowledged create, update and rotation over ${ROUNDS} kill/restart rounds, consistent and audited once`, async ({
    annotate,
  }) => {
    const db = (fixture.db = await createTestDatabase(engine));
    let server = await startServeProcess(db, { env: WEBHOOK_SERVE_ENV });
    const adminToken = server.adminTokens().Customer;
    const groups: GroupLog[] = [];
    // Answers after a few milliseconds, so that deliveries are in flight when the kill comes.
    const receiver = (fixture.receiver = await startWebhookReceiver(() => ({
      delayMs: Math.floor(Math.random() * 20),
    })));
    const endpoint = await call(server, {
      method: 'POST',
      path: '/api/admin/webhook_endpoints',
      token: adminToken,
      body: { url: receiver.url, events: ['*'] },
    });
    expect(endpoint.status, endpoint.raw).toBe(200);

    for (let round = 1; round <= ROUNDS; round++) {
      const workload = new Workload(server, adminToken, `${engine}_r${round}`);
      const startedAt = Date.now();
      const lanes = workload.run();
      await waitFor(`${MIN_ACKNOWLEDGED_PER_ROUND} acknowledged writes`, 20_000, () =>
        workload.acknowledgedCount >= MIN_ACKNOWLEDGED_PER_ROUND && Date.now() - startedAt >= ROUND_MS
          ? true
          : undefined,
      );
      workload.stop();
      expect(await server.stop('SIGKILL')).toBeNull();
      await lanes;
      groups.push(...workload.groups);
      const inFlight = workload.inFlight();
      expect(inFlight.length, 'requests in flight at the kill').toBeGreaterThan(0);

      if (engine === 'sqlite') checkSqliteImage(db);
      server = await startServeProcess(db, { env: WEBHOOK_SERVE_ENV });
      const appliedInFlight = await checkGroups(server, adminToken, groups);
      const applied = inFlight.filter((write) => appliedInFlight.has(write.requestId)).length;
      await annotate(
        `round ${round}: ${workload.acknowledgedCount} writes acknowledged on ${workload.groups.length} groups; ${inFlight.length} in flight at the kill, of which ${applied} applied`,
      );
    }

    const webhooks = await checkWebhooks(server, adminToken, receiver);
    await annotate(
      `webhooks: ${webhooks.events} events, all received; ${webhooks.duplicates} received again after a kill`,
    );
    expect(await server.stop('SIGTERM')).toBe(0);
    if (engine === 'sqlite') checkSqliteFile(db.sqlitePath!);
  }, 180_000);
});
