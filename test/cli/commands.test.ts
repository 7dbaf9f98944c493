// The administrative commands on their own (no server): output formats, errors, help.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, type Sandbox, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, type RunResult, runUgs } from '../support/ugs-command.js';
import { runUgsInProcess } from '../support/ugs-in-process.js';

afterEach(cleanUp);

/** Parses the single line of JSON a `--json` command prints. */
function jsonOf(result: RunResult): unknown {
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}

/** The one line a create command prints: the new id. */
function idOf(result: RunResult): number {
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout).toMatch(/^[1-9][0-9]*\n$/);
  return Number(result.stdout);
}

describe('ugs migrate and ugs tokens', () => {
  it('migrate on an empty database creates workspace default, so tokens work before any serve', async () => {
    const box = sandbox();
    const migrated = await box.ugs('migrate');
    expect(migrated).toMatchObject({ code: 0, stderr: '' });

    const workspaces = jsonOf(await box.ugs('workspaces', 'list', '--json'));
    expect(workspaces).toEqual([expect.objectContaining({ name: 'default' })]);

    const created = await box.ugs('tokens', 'create', '--environment', 'Testing', '--scope', 'read');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^ugs_test_[0-9a-f]{64}\n$/);
  });

  it('any command on an empty database creates workspace default itself', async () => {
    const box = sandbox();
    const created = await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'admin');
    expect(created.stdout).toMatch(/^ugs_live_[0-9a-f]{64}\n$/);
    expect(jsonOf(await box.ugs('workspaces', 'list', '--json'))).toEqual([
      expect.objectContaining({ name: 'default' }),
    ]);
  });

  it('tokens create --json prints one object with exactly id, name, scope, environment, workspace, token', async () => {
    const box = sandbox();
    const token = jsonOf(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'write', '--name', 'ci', '--json'),
    );
    expect(Object.keys(token as object).sort()).toEqual(['environment', 'id', 'name', 'scope', 'token', 'workspace']);
    expect(token).toEqual({
      id: expect.any(Number),
      name: 'ci',
      scope: 'write',
      environment: 'Customer',
      workspace: 'default',
      token: expect.stringMatching(/^ugs_live_[0-9a-f]{64}$/),
    });
  });

  it('tokens list shows the tokens, plain and as JSON, but never a secret or a hash', async () => {
    const box = sandbox();
    const first = jsonOf(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'admin', '--name', 'ops', '--json'),
    ) as { id: number; token: string };
    const second = jsonOf(
      await box.ugs('tokens', 'create', '--environment', 'Testing', '--scope', 'read', '--json'),
    ) as { id: number; token: string };

    const plain = await box.ugs('tokens', 'list');
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toMatch(/\bops\b/);
    expect(plain.stdout).toMatch(/\bTesting\b/);

    const listed = jsonOf(await box.ugs('tokens', 'list', '--json')) as Array<Record<string, unknown>>;
    expect(listed.map((token) => token.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed.find((token) => token.id === first.id)).toMatchObject({
      name: 'ops',
      scope: 'admin',
      environment: 'Customer',
    });

    for (const output of [plain.stdout, JSON.stringify(listed)]) {
      expect(output).not.toContain(first.token);
      expect(output).not.toContain(second.token);
      expect(output).not.toMatch(/ugs_(live|test)_/);
      expect(output).not.toMatch(/[0-9a-f]{64}/); // no SHA-256 hash either
    }
    for (const token of listed) expect(Object.keys(token).filter((key) => /token|hash|secret/i.test(key))).toEqual([]);
  });

  it('tokens revoke takes the token out of the list; revoking it again or an unknown id fails', async () => {
    const box = sandbox();
    const kept = jsonOf(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--json'),
    ) as { id: number };
    const revoked = jsonOf(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--json'),
    ) as { id: number };

    const result = await box.ugs('tokens', 'revoke', String(revoked.id));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    // `tokens list` promises the live tokens: a revoked one is left out, or at least marked revoked.
    const listed = jsonOf(await box.ugs('tokens', 'list', '--json')) as Array<{
      id: number;
      revoked_at?: string | null;
    }>;
    expect(listed.filter((token) => token.revoked_at == null).map((token) => token.id)).toEqual([kept.id]);

    expectCleanFailure(await box.ugs('tokens', 'revoke', String(revoked.id)), /token/i);
    expectCleanFailure(await box.ugs('tokens', 'revoke', '424242'), /424242/);
    expectCleanFailure(await box.ugs('tokens', 'revoke', 'abc'), /abc/);
  });
});

describe('ugs schemas, data-sources and workspaces', () => {
  async function schemaAndDataSource(box: Sandbox) {
    const schemaId = idOf(await box.ugs('schemas', 'create', '--name', 'sales'));
    const dataSourceId = idOf(
      await box.ugs(
        'data-sources',
        'create',
        '--provided-id',
        'ds1',
        '--name',
        'Warehouse',
        '--schema-id',
        String(schemaId),
        '--environment',
        'Customer',
      ),
    );
    return { schemaId, dataSourceId };
  }

  it('schemas create and data-sources create print the new ids; both lists show them, plain and as JSON', async () => {
    const box = sandbox();
    const { schemaId, dataSourceId } = await schemaAndDataSource(box);

    expect(jsonOf(await box.ugs('schemas', 'list', '--json'))).toEqual([{ id: schemaId, name: 'sales' }]);
    expect(jsonOf(await box.ugs('data-sources', 'list', '--json'))).toEqual([
      {
        id: dataSourceId,
        provided_id: 'ds1',
        name: 'Warehouse',
        schema_id: schemaId,
        api_environment_tag: 'Customer',
        shared: false,
      },
    ]);

    const schemas = await box.ugs('schemas', 'list');
    expect(schemas).toMatchObject({ code: 0, stderr: '' });
    expect(schemas.stdout).toMatch(new RegExp(`^${schemaId}\\s+sales$`, 'm'));
    const dataSources = await box.ugs('data-sources', 'list');
    expect(dataSources).toMatchObject({ code: 0, stderr: '' });
    expect(dataSources.stdout).toMatch(
      new RegExp(`^${dataSourceId}\\s+ds1\\s+Warehouse\\s+${schemaId}\\s+Customer\\s+false$`, 'm'),
    );
  });

  it('data sources are listed per environment', async () => {
    const box = sandbox();
    await schemaAndDataSource(box);
    expect(jsonOf(await box.ugs('data-sources', 'list', '--environment', 'Testing', '--json'))).toEqual([]);
  });

  it('a duplicate data source provided id fails with a clear message and prints nothing', async () => {
    const box = sandbox();
    const { schemaId } = await schemaAndDataSource(box);
    const duplicate = await box.ugs(
      'data-sources',
      'create',
      '--provided-id',
      'ds1',
      '--name',
      'Again',
      '--schema-id',
      String(schemaId),
      '--environment',
      'Customer',
    );
    expectCleanFailure(duplicate, /provided id/i);
    expect(jsonOf(await box.ugs('data-sources', 'list', '--json'))).toHaveLength(1);
    // The same provided id is free in the other environment.
    idOf(
      await box.ugs(
        'data-sources',
        'create',
        '--provided-id',
        'ds1',
        '--name',
        'Test copy',
        '--schema-id',
        String(schemaId),
        '--environment',
        'Testing',
      ),
    );
  });

  it('a data source for an unknown schema fails', async () => {
    const box = sandbox();
    expectCleanFailure(
      await box.ugs(
        'data-sources',
        'create',
        '--provided-id',
        'ds1',
        '--name',
        'N',
        '--schema-id',
        '999',
        '--environment',
        'Customer',
      ),
      /schema/i,
    );
  });

  it('workspaces create adds a workspace that tokens create --workspace can use', async () => {
    const box = sandbox();
    const created = await box.ugs('workspaces', 'create', 'acme');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/acme/);
    const workspaces = jsonOf(await box.ugs('workspaces', 'list', '--json')) as Array<{ name: string }>;
    expect(workspaces.map((workspace) => workspace.name).sort()).toEqual(['acme', 'default']);

    const token = jsonOf(
      await box.ugs(
        'tokens',
        'create',
        '--workspace',
        'acme',
        '--environment',
        'Testing',
        '--scope',
        'write',
        '--json',
      ),
    );
    expect(token).toMatchObject({
      workspace: 'acme',
      environment: 'Testing',
      scope: 'write',
      token: expect.stringMatching(/^ugs_test_[0-9a-f]{64}$/),
    });
    expect(jsonOf(await box.ugs('tokens', 'list', '--workspace', 'acme', '--json'))).toHaveLength(1);
    expect(jsonOf(await box.ugs('tokens', 'list', '--json'))).toEqual([]);
  });

  it('an unknown workspace fails with a message naming it; a duplicate workspace fails too', async () => {
    const box = sandbox();
    expectCleanFailure(
      await box.ugs('tokens', 'create', '--workspace', 'nope', '--environment', 'Customer', '--scope', 'read'),
      /nope/,
    );
    expectCleanFailure(await box.ugs('schemas', 'list', '--workspace', 'nope'), /nope/);
    expect((await box.ugs('workspaces', 'create', 'acme')).code).toBe(0);
    expectCleanFailure(await box.ugs('workspaces', 'create', 'acme'), /acme|exists|taken/i);
  });
});

describe('help and usage errors', () => {
  /** The commands of docs/cli.md; the help may list more. */
  const specCommands = [
    'serve',
    'migrate',
    'tokens',
    'tokens create',
    'tokens list',
    'tokens revoke',
    'workspaces',
    'workspaces create',
    'workspaces list',
    'schemas',
    'schemas create',
    'schemas list',
    'data-sources',
    'data-sources create',
    'data-sources list',
    'data-sources delete',
    'groups',
    'groups list',
    'groups show',
    'groups export',
    'groups import',
    'groups sync',
  ];

  /** The subcommand names a help text lists under "Commands:" (without `help` itself). */
  function subcommandsIn(help: string): string[] {
    const section = help.split(/^Commands:$/m)[1] ?? '';
    return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
  }

  it(
    'ugs --help, and --help of every command it lists at every level, prints usage on stdout and exits 0',
    { timeout: 120_000 },
    async () => {
      const seen: string[] = [];
      const visit = async (command: string[]): Promise<void> => {
        // `ugs --help` as a process runs the bin script; the help of the commands under it is the
        // same program's, printed in process (a spawn costs 0.3-0.6 s of Node start-up each).
        const result = await (command.length === 0 ? runUgs : runUgsInProcess)([...command, '--help']);
        expect(result, `ugs ${command.join(' ')} --help`).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(new RegExp(`^Usage: ${['ugs', ...command].join(' ')} `));
        seen.push(command.join(' '));
        await Promise.all(subcommandsIn(result.stdout).map((name) => visit([...command, name])));
      };
      await visit([]);
      expect(seen).toEqual(expect.arrayContaining(specCommands));
    },
  );

  const usageErrors: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['bogus'], /unknown command 'bogus'/],
    ['an unknown subcommand', ['tokens', 'bogus'], /bogus/],
    ['a missing mandatory option', ['tokens', 'create', '--scope', 'read'], /--environment/],
    ['an invalid choice', ['tokens', 'create', '--environment', 'Customer', '--scope', 'root'], /root/],
    ['an invalid environment', ['tokens', 'create', '--environment', 'Production', '--scope', 'read'], /Production/],
    ['a missing argument', ['workspaces', 'create'], /name/],
    ['an unknown option', ['schemas', 'list', '--colour'], /--colour/],
    [
      'a schema id that is not a number',
      [
        'data-sources',
        'create',
        '--provided-id',
        'x',
        '--name',
        'x',
        '--schema-id',
        'one',
        '--environment',
        'Customer',
      ],
      /one/,
    ],
    ['an unsupported database URL', ['migrate', '--database', 'mysql://localhost/ugs'], /mysql/],
  ];

  it.each(usageErrors)(
    '%s exits non-zero with a message on stderr and nothing on stdout',
    async (_label, args, message) => {
      const box = sandbox();
      // Run in the sandbox so that a command wrongly touching a database touches only the temp dir.
      const result = await runUgsInProcess(args, { cwd: box.dir, env: { UGS_DATABASE_URL: box.databaseUrl } });
      expectCleanFailure(result, message);
    },
  );

  it('a usage error from the bin script, as a process, exits non-zero with the message on stderr only', async () => {
    const box = sandbox();
    const result = await runUgs(['tokens', 'bogus'], { cwd: box.dir, env: { UGS_DATABASE_URL: box.databaseUrl } });
    expectCleanFailure(result, /bogus/);
  });
});
