// Offline verification of embed tokens with the client library's verifier, in this process: what a
// renderer can do per second without calling the service, beside the `verify` endpoint's req/s.
import { createEmbedTokenVerifier } from '../packages/client/src/index.js';
import { latencyFigures, type LoadFigures } from './wrk.js';
import type { Seeded } from './seed.js';

/** Tokens minted for the run: one per group of the first part of the sample. */
const TOKENS = 200;

async function mintTokens(port: number, seeded: Seeded): Promise<string[]> {
  const tokens: string[] = [];
  for (const id of seeded.ids.slice(0, TOKENS)) {
    const response = await fetch(`http://127.0.0.1:${port}/api/user/embed_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Token ${seeded.apiToken}` },
      body: JSON.stringify({ user_group_id: id, embed_id: 'bench' }),
    });
    const body = (await response.json()) as { embed_token?: string };
    if (!body.embed_token) throw new Error(`minting an embed token failed: ${response.status}`);
    tokens.push(body.embed_token);
  }
  return tokens;
}

/** Verifies the tokens round-robin, one after the other, for `seconds` (after `warmup` unrecorded). */
export async function measureOfflineVerify(
  port: number,
  seeded: Seeded,
  options: { seconds: number; warmup: number },
): Promise<LoadFigures> {
  const tokens = await mintTokens(port, seeded);
  const verify = createEmbedTokenVerifier({ issuer: `http://127.0.0.1:${port}/w/default`, audience: 'bench' });
  let failures = 0;
  const run = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    for (let n = 0; performance.now() < end; n += 1) {
      const started = performance.now();
      try {
        await verify(tokens[n % tokens.length]!);
        if (record) latencies.push(performance.now() - started);
      } catch {
        if (record) failures += 1;
      }
    }
    return latencies;
  };
  await run(options.warmup, false);
  const latencies = (await run(options.seconds, true)).sort((a, b) => a - b);
  return {
    seconds: options.seconds,
    responses: latencies.length + failures,
    ok: latencies.length,
    okPerSecond: latencies.length / options.seconds,
    latencyMs: latencyFigures(latencies, 3),
    errors: { total: failures, non2xx: 0, wrongOutcome: failures, socket: 0, timeouts: 0 },
    statusCodes: {},
    cpuUsPerResponse: null,
  };
}
