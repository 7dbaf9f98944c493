#!/usr/bin/env node
// The command runs the compiled program (dist/). In a checkout that has not been built yet, say so
// and how, rather than print Node's module-resolution stack.
import { URL } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
let program;
try {
  program = await import(main.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(main.pathname)) throw error;
  process.stderr.write(
    'ugs: this checkout is not built yet: run `npm run build` (or `npm start`, which builds) first, then try again.\n',
  );
  process.exit(1);
}
await program.main(process.argv);
