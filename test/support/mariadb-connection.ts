/*
 * A real MariaDB (or MySQL) for the suites that run SQL on it (the client library's access-rules
 * filters): UGS_TEST_MARIADB_URL, or the local server .ci/run starts. A server that cannot be reached
 * fails the test file at once, with the reason, instead of its tests being reported as skipped.
 */
import mysql from 'mysql2/promise';

export const MARIADB_URL = process.env.UGS_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** A connection (mysql2's default: utf8mb4), for server-side prepared statements (`execute`). */
export async function connectMariadb(): Promise<mysql.Connection> {
  try {
    return await mysql.createConnection({ uri: MARIADB_URL, connectTimeout: 5000 });
  } catch (error) {
    throw new Error(
      `MariaDB at ${redacted(MARIADB_URL)} cannot be reached (${(error as Error).message}). The access-rules suite ` +
        'needs it: start the local server (.ci/run does, and creates the database `test`) or point UGS_TEST_MARIADB_URL at one.',
      { cause: error },
    );
  }
}
