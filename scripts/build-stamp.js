#!/usr/bin/env node
// `npm run build`'s first and last steps (scripts/build-freshness.js): `begin` takes the stamp away
// and notes when the build began; `end`, reached only when every step succeeded, makes that note the
// stamp, dated when the build began. So any successful build (`npm test`'s, CI's, `npm start`'s) is
// known to be fresh, and `npm start` never rebuilds dist/ under processes that are running from it.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP } from './build-freshness.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const stamp = join(root, STAMP);
const begun = `${stamp}.begun`;

const step = process.argv[2];
if (step === 'begin') {
  rmSync(stamp, { force: true });
  mkdirSync(join(stamp, '..'), { recursive: true });
  writeFileSync(begun, 'written by scripts/build-stamp.js when `npm run build` began\n');
} else if (step === 'end') {
  renameSync(begun, stamp);
} else {
  process.stderr.write('usage: node scripts/build-stamp.js begin|end\n');
  process.exit(2);
}
