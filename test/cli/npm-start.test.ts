// `npm start` as an operator runs it: it builds only when the build is out of date, and a supervisor's
// SIGTERM to npm drains the server and ends every one of its processes, the in-flight request
// answered.
import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { heldGetOrCreate } from '../support/held-request.js';
import { pidsWithArgument } from '../scale/helpers.js';
import { cleanUp, sandbox } from '../support/cli-sandbox.js';
import { REPO } from '../support/ugs-command.js';
import { firstStartTokensFileIn, startServe } from '../support/serve-process.js';
import { waitFor } from '../support/wait-for.js';

afterEach(cleanUp);

/** Short enough for a test, long enough for the held request to be answered within it. */
const GRACE_MS = 8_000;
/** How long the processes may take beyond the grace to exit (closing the database, Node's exit). */
const EXIT_MARGIN_MS = 4_000;

const distMain = () => statSync(`${REPO}/dist/cli/main.js`).mtimeMs;

describe('npm start', () => {
  it('a second start with an up-to-date build starts without compiling', async () => {
    const box = sandbox();
    // The first start builds if anything changed since the last build (a minute on a busy machine).
    const first = await startServe(['--database', box.databaseUrl], { viaNpmStart: true, startTimeoutMs: 240_000 });
    expect(await first.stop(), first.stderr()).toBe(0);
    const built = distMain();

    const second = await startServe(['--database', box.databaseUrl], { viaNpmStart: true });
    expect(second.stderr()).toContain('npm start: the build is up to date');
    expect(second.stderr()).not.toContain('building');
    expect(distMain()).toBe(built);
    expect(await second.stop(), `${second.stdout()}\n${second.stderr()}`).toBe(0);
  }, 300_000);

  describe.each([1, 2])('with --workers %i', (workers) => {
    it('SIGTERM to npm ends every server process within the grace, the in-flight request answered', async () => {
      const box = sandbox();
      const args = [
        '--database',
        box.databaseUrl,
        '--workers',
        String(workers),
        '--drain-timeout-ms',
        String(GRACE_MS),
      ];
      const server = await startServe(args, { viaNpmStart: true, startTimeoutMs: 240_000 });
      // Every process of this server names its database: the script, ugs serve and its workers.
      await waitFor('the server processes', 15_000, async () => {
        const pids = pidsWithArgument(box.databaseUrl);
        return pids.length >= 2 + (workers > 1 ? workers : 0) ? pids : undefined;
      });
      await waitFor('the first-start tokens file', 15_000, async () =>
        firstStartTokensFileIn(server.stdout()) === undefined ? undefined : true,
      );
      const token = server.adminTokens().Customer;
      const held = heldGetOrCreate(server.baseUrl, token, 'held_1');
      await held.accepted;

      const signalledAt = Date.now();
      server.process.kill('SIGTERM');
      // The request in flight is answered although the drain began before its body arrived.
      setTimeout(held.finish, 500);
      const answer = await held.response;
      expect(answer.status, answer.raw).toBe(200);
      expect(answer.body.user_group.provided_id).toBe('held_1');

      await waitFor('every server process to exit', GRACE_MS + EXIT_MARGIN_MS, async () =>
        pidsWithArgument(box.databaseUrl).length === 0 ? true : undefined,
      );
      expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS + EXIT_MARGIN_MS);
      expect(await server.exited).toBe(0);
    }, 300_000);
  });
});
