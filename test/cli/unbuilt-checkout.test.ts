// `npx ugs …` in a checkout that was never built: a sentence saying what to do, not a module stack.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, run } from '../support/ugs-command.js';

const checkout = mkdtempSync(join(tmpdir(), 'ugs-unbuilt-'));
mkdirSync(join(checkout, 'bin'));
copyFileSync(join(REPO, 'bin', 'ugs.js'), join(checkout, 'bin', 'ugs.js'));

afterAll(() => rmSync(checkout, { recursive: true, force: true }));

describe('bin/ugs.js before the first build', () => {
  it('says to build first and exits 1', async () => {
    const result = await run(process.execPath, [join(checkout, 'bin', 'ugs.js'), '--help'], { cwd: checkout });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'ugs: this checkout is not built yet: run `npm run build` (or `npm start`, which builds) first, then try again.\n',
    });
  });
});
