// The README's examples run in order, as written, against a real server on a
// socket, on the engine of the vitest project (sqlite, postgres): the banner's "Try it" command, then
// the README's ```sh blocks in one shell (test/support/readme-examples.ts says how).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectReadmeExamplesToPass } from '../support/readme-examples.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe("the README's examples, in order, as written", () => {
  let db: TestDatabase;
  let server: ServeProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    // What `npm start` runs once built: `ugs serve`, here on a port of its own and the test's database.
    server = await startServeProcess(db);
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('the quickstart starts the server, then every command exits 0 and answers what the README shows', async () => {
    await expectReadmeExamplesToPass(server);
  });
});
