// `ugs serve` names its public URL as the OpenAPI document's server: --public-url, else
// UGS_PUBLIC_URL, else http://<host>:<port> as bound.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, stopAllServeProcesses } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('ugs serve: /openapi.json servers', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
  });
  afterEach(stopAllServeProcesses);
  afterAll(async () => {
    await db?.drop();
  });

  const serversOf = async (baseUrl: string) => {
    const response = await fetch(`${baseUrl}/openapi.json`);
    return ((await response.json()) as { servers: Array<{ url: string }> }).servers.map((server) => server.url);
  };

  it('is --public-url when given (without its trailing slash), over UGS_PUBLIC_URL', async () => {
    const server = await startServeProcess(db, {
      args: ['--public-url', 'https://ugs.example.com/'],
      env: { UGS_PUBLIC_URL: 'https://elsewhere.example.com' },
    });
    expect(await serversOf(server.baseUrl)).toEqual(['https://ugs.example.com']);
  });

  it('is UGS_PUBLIC_URL without the flag', async () => {
    const server = await startServeProcess(db, { env: { UGS_PUBLIC_URL: 'https://ugs.example.com/base' } });
    expect(await serversOf(server.baseUrl)).toEqual(['https://ugs.example.com/base']);
  });

  it('is where the server listens without either', async () => {
    const server = await startServeProcess(db);
    const { port } = new URL(server.baseUrl);
    expect(await serversOf(server.baseUrl)).toEqual([`http://127.0.0.1:${port}`]);
  });
});
