import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { LogFn } from 'pino';
import { parseDatabaseUrl } from '../config/database-url.js';
import type { IssuedApiToken } from '../domain/api-tokens/api-tokens.service.js';
import type { Runtime } from '../runtime.js';

/**
 * Where a first start's admin tokens go: `--first-start-tokens`, else beside a SQLite database.
 * Never stdout or stderr (a log shipper takes both in a container), and never a log line: the log
 * names the file only. PostgreSQL has no data folder, so there it is a file only when one is named.
 */
export function firstStartTokensFile(flags: { database: string; firstStartTokens?: string }): string | undefined {
  if (flags.firstStartTokens !== undefined && flags.firstStartTokens !== '') return resolve(flags.firstStartTokens);
  const location = parseDatabaseUrl(flags.database);
  return location.engine === 'sqlite' ? resolve(`${location.path}.first-start-tokens`) : undefined;
}

/** The file's text, and what a terminal shows: the tokens, then a request to try one with. */
export function firstStartBanner(tokens: IssuedApiToken[], baseUrl: string): string {
  const line = '='.repeat(78);
  const rows = tokens.map(({ record, secret }) => `  ${record.environment.padEnd(9)} ${secret}`);
  const example = tokens[0]?.secret ?? '<API_TOKEN>';
  return [
    line,
    ' User Group Service: first start. One admin API token per environment was created.',
    ' Nothing else shows them: store them somewhere safe, then delete this file.',
    '',
    ...rows,
    '',
    ' Try it:',
    `  curl -X GET ${baseUrl}/api/user -H 'Authorization: Token ${example}' \\`,
    `    -H 'Content-Type: application/json' --data '{"user_group_id":"example_1","name":"Example 1"}'`,
    line,
    '',
  ].join('\n');
}

/** The log message naming the file; tests and operators look for it. */
export const TOKENS_WRITTEN = 'first start: one admin API token per environment was written to the file named here';

/**
 * On a first start (workspace `default` has no API token): makes one admin token per environment
 * and writes them to `file`, created 0600, in one step (a reader sees the whole file or none). The
 * file is opened before the tokens exist, so a folder it cannot be written to uses up no tokens. The
 * log names the file, or says why no tokens were made; a terminal on stderr also shows them.
 */
export async function issueFirstStartTokens(
  runtime: Runtime,
  file: string | undefined,
  baseUrl: string,
  log: { info: LogFn; warn: LogFn; error: LogFn },
): Promise<void> {
  const workspace = runtime.defaultWorkspace;
  const alreadyHasTokens = () =>
    log.info(
      'workspace "default" already has API tokens (made by `ugs tokens create` or an earlier start): no first-start tokens were made',
    );
  if (file === undefined) {
    if ((await runtime.store.listApiTokens(workspace.id)).length > 0) alreadyHasTokens();
    else
      log.warn(
        'workspace "default" has no API token and no --first-start-tokens file is set (PostgreSQL): create the first admin token with `ugs tokens create --scope admin --environment Customer`, which prints it on its own stdout, or start once with --first-start-tokens <file>',
      );
    return;
  }
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let fd: number;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    fd = openSync(temporary, 'wx', 0o600);
  } catch (error) {
    log.error(
      { err: error, file },
      'the first-start tokens file cannot be written, so no first-start tokens were made; create an admin token with `ugs tokens create --scope admin` if none exists',
    );
    return;
  }
  let holdsTokens = false;
  try {
    const tokens = await runtime.services.apiTokens.issueFirstStartTokens(workspace.id, { type: 'cli' });
    if (!tokens) {
      alreadyHasTokens();
      return;
    }
    const text = firstStartBanner(tokens, baseUrl);
    writeSync(fd, text);
    fsyncSync(fd);
    holdsTokens = true;
    try {
      renameSync(temporary, file);
    } catch (error) {
      log.error({ err: error, file: temporary }, `${TOKENS_WRITTEN}, which could not be renamed to ${file}`);
      return;
    }
    log.warn({ file }, `${TOKENS_WRITTEN} (mode 0600): store them somewhere safe, then delete the file`);
    // A person at a terminal sees them at once; a pipe (a collector) never does.
    if (process.stderr.isTTY) process.stderr.write(text);
  } finally {
    closeSync(fd);
    // Once tokens exist, the file that holds them stays.
    if (!holdsTokens) rmSync(temporary, { force: true });
  }
}
