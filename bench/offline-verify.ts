// Offline verification of embed tokens with the client library's verifier, in this process: what a
// renderer can do per second on one core without calling the service.
// - offline-verify: distinct tokens, each verified in full, against the machine's ceiling measured in
//   the same run: a bare node:crypto `verify` loop over the same tokens with prepared key objects.
// - offline-verify-repeated: the few tokens of a dashboard's views, each presented again with every
//   query (remembered by the verifier), against the service's POST /api/user/verify of the same block.
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { createEmbedTokenVerifier } from '../packages/client/src/index.js';
import { latencyFigures, type LoadFigures } from './wrk.js';
import type { Seeded } from './seed.js';

/** Distinct tokens minted for offline-verify: one per group of the first part of the sample. */
const DISTINCT_TOKENS = 200;
/**
 * Tokens the distinct run's verifier remembers: fewer than it is given in turn, so every verification
 * misses and is a full one, remembering included (the token remembered, the least recent forgotten).
 */
const DISTINCT_CACHE_SIZE = 100;
/** The tokens of a dashboard's views (offline-verify-repeated), each presented in turn. */
const DASHBOARD_TOKENS = 8;
/** The page origin the tokens are pinned to and every call checks. */
const ORIGIN = 'https://bench.example.com';
/** The ceiling and the verifier run in turns of this long, so that both meet the same machine. */
const SLICE_MS = 250;

/** One embed token for each of the first `count` groups of the sample, minted by the service one after the other. */
export async function mintTokens(port: number, seeded: Seeded, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (const id of seeded.ids.slice(0, count)) {
    const response = await fetch(`http://127.0.0.1:${port}/api/user/embed_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${seeded.apiToken}` },
      body: JSON.stringify({ user_group_id: id, embed_id: 'bench', origin: ORIGIN }),
    });
    const body = (await response.json()) as { embed_token?: string };
    if (!body.embed_token) throw new Error(`minting an embed token failed: ${response.status}`);
    tokens.push(body.embed_token);
  }
  return tokens;
}

/** Operations of one kind, over the slices they ran in. */
class Tally {
  ok = 0;
  failures = 0;
  ms = 0;
  cpuUs = 0;
  readonly latencies: number[] = [];

  figures(): LoadFigures {
    const seconds = this.ms / 1000;
    const sorted = this.latencies.sort((a, b) => a - b);
    return {
      seconds: Math.round(seconds * 100) / 100,
      responses: this.ok + this.failures,
      ok: this.ok,
      okPerSecond: this.ok / seconds,
      latencyMs: latencyFigures(sorted, 4),
      errors: { total: this.failures, non2xx: 0, wrongOutcome: this.failures, socket: 0, timeouts: 0 },
      statusCodes: {},
      // This process's CPU per verification: the verifier runs here, not in the service.
      cpuUsPerResponse: this.ok > 0 ? Math.round((this.cpuUs / this.ok) * 100) / 100 : null,
    };
  }
}

/** Runs `step` in a loop for `ms`, counted into `tally` when `record`. */
async function slice(tally: Tally, ms: number, record: boolean, step: () => unknown): Promise<void> {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  for (let before = start; before < end; before = performance.now()) {
    try {
      const result = step();
      if (result instanceof Promise) await result;
      if (!record) continue;
      tally.ok += 1;
      tally.latencies.push(performance.now() - before);
    } catch {
      if (record) tally.failures += 1;
    }
  }
  if (!record) return;
  const cpu = process.cpuUsage(cpuStart);
  tally.ms += performance.now() - start;
  tally.cpuUs += cpu.user + cpu.system;
}

/**
 * Runs each of `steps` for `seconds` (after `warmup` unrecorded), in turns of SLICE_MS one after the
 * other, so that a machine whose load changes meets them alike.
 */
async function inTurns(steps: (() => unknown)[], options: { seconds: number; warmup: number }): Promise<LoadFigures[]> {
  const tallies = steps.map(() => new Tally());
  for (const [seconds, record] of [
    [options.warmup, false],
    [options.seconds, true],
  ] as const) {
    const turns = Math.ceil((seconds * 1000) / SLICE_MS);
    for (let turn = 0; turn < turns; turn += 1) {
      for (const [index, step] of steps.entries()) await slice(tallies[index]!, (seconds * 1000) / turns, record, step);
    }
  }
  return tallies.map((tally) => tally.figures());
}

/** Each element of `items` in turn, forever. */
function inTurn<T>(items: T[]): () => T {
  let n = 0;
  return () => items[n++ % items.length]!;
}

/** The JWKS's P-256 keys by kid, each a KeyObject prepared once. */
async function preparedKeys(port: number): Promise<Map<string, KeyObject>> {
  const response = await fetch(`http://127.0.0.1:${port}/w/default/.well-known/jwks.json`);
  const { keys } = (await response.json()) as {
    keys: { kid: string; kty: string; crv: string; x: string; y: string }[];
  };
  return new Map(keys.map((jwk) => [jwk.kid, createPublicKey({ key: jwk, format: 'jwk' })]));
}

export interface OfflineVerifyFigures {
  /** The bare node:crypto verify loop: the ceiling. */
  ceiling: LoadFigures;
  verifier: LoadFigures;
  /** The same verifier checking the issuer's revocation document too, the document cached. */
  withRevocations: LoadFigures;
}

/**
 * offline-verify: DISTINCT_TOKENS tokens verified in turn by `createEmbedTokenVerifier` (each a full
 * verification), and in turns with it the ceiling: `crypto.verify` of the same tokens' signatures
 * with the JWKS's keys prepared as KeyObjects, the signing inputs and signatures decoded beforehand.
 */
export async function measureOfflineVerify(
  port: number,
  seeded: Seeded,
  options: { seconds: number; warmup: number },
): Promise<OfflineVerifyFigures> {
  const tokens = await mintTokens(port, seeded, DISTINCT_TOKENS);
  const keys = await preparedKeys(port);
  const signed = tokens.map((token) => {
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
    const key = keys.get(kid);
    if (!key) throw new Error(`no key ${kid} in the JWKS`);
    return {
      options: { key, dsaEncoding: 'ieee-p1363' as const },
      data: Buffer.from(`${header}.${payload}`),
      signature: Buffer.from(signature, 'base64url'),
    };
  });
  const verify = createEmbedTokenVerifier({
    issuer: `http://127.0.0.1:${port}/w/default`,
    audience: 'bench',
    tokenCacheSize: DISTINCT_CACHE_SIZE,
  });
  // Its document fetched once, then cached for the whole run: what a renderer pays per verification.
  const checked = createEmbedTokenVerifier({
    issuer: `http://127.0.0.1:${port}/w/default`,
    audience: 'bench',
    tokenCacheSize: DISTINCT_CACHE_SIZE,
    revocations: { maxAgeMs: 3_600_000 },
  });
  const check = { origin: ORIGIN };
  const nextSigned = inTurn(signed);
  const nextToken = inTurn(tokens);
  const nextChecked = inTurn(tokens);
  const [ceiling, verifier, withRevocations] = await inTurns(
    [
      () => {
        const { options: key, data, signature } = nextSigned();
        if (!cryptoVerify('sha256', data, key, signature)) throw new Error('a signature did not verify');
      },
      () => verify(nextToken(), check),
      () => checked(nextChecked(), check),
    ],
    options,
  );
  return { ceiling: ceiling!, verifier: verifier!, withRevocations: withRevocations! };
}

/**
 * offline-verify-repeated: the DASHBOARD_TOKENS tokens of a dashboard's views, presented in turn as
 * its queries present them, to one verifier with its defaults: after the first call each is
 * remembered, and every call still checks issuer, audience, origin, exp and nbf.
 */
export async function measureOfflineVerifyRepeated(
  port: number,
  seeded: Seeded,
  options: { seconds: number; warmup: number },
): Promise<LoadFigures> {
  const tokens = await mintTokens(port, seeded, DASHBOARD_TOKENS);
  const verify = createEmbedTokenVerifier({ issuer: `http://127.0.0.1:${port}/w/default`, audience: 'bench' });
  const check = { origin: ORIGIN };
  const nextToken = inTurn(tokens);
  const [figures] = await inTurns([() => verify(nextToken(), check)], options);
  return figures!;
}
