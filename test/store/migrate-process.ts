// Run as a separate process by sqlite-store.test.ts: waits for a shared start instant so that several
// processes migrate the same file at the same moment, then migrates and seeds the default workspace.
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const [file, startAt] = process.argv.slice(2);
if (file === undefined || startAt === undefined) throw new Error('usage: migrate-process.ts <file> <start-epoch-ms>');

await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
const store = openSqliteStore({ path: file });
await store.migrate();
const { created } = await store.ensureWorkspace('default', {
  at: new Date().toISOString(),
  actor: { type: 'cli' },
  requestId: null,
});
await store.close();
process.stdout.write(JSON.stringify({ created }));
