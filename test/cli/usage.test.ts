// `ugs usage`: the busiest groups of an environment, or one group's days, read from what the serving
// processes wrote (here written straight into the database: the CLI itself counts nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/cli/context.js';
import { openRuntime } from '../../src/runtime.js';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterAll(cleanUp);

const today = new Date().toISOString().slice(0, 10);

describe('ugs usage', { timeout: 60_000 }, () => {
  let box: Sandbox;
  const teamIds: Record<string, number> = {};

  beforeAll(async () => {
    box = sandbox();
    const runtime = await openRuntime({ databaseUrl: box.databaseUrl, encryptionKey: undefined });
    try {
      for (const environment of ['Customer', 'Testing'] as const) {
        const caller = await cliCaller(runtime, 'default', environment);
        for (const id of ['quiet', 'busy'])
          teamIds[`${environment}:${id}`] = (
            await runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: id })
          ).userGroup.teamId;
      }
      const workspaceId = runtime.defaultWorkspace.id;
      const row = (key: string, day: string, reads: number, verifications: number) => ({
        workspaceId,
        environment: key.split(':')[0] as 'Customer' | 'Testing',
        teamId: teamIds[key]!,
        day,
        embedTokensMinted: 1,
        verifications,
        reads,
      });
      await runtime.store.addUsage([
        row('Customer:busy', today, 3, 50),
        row('Customer:quiet', today, 9, 2),
        row('Customer:busy', '2026-01-01', 100, 100),
        row('Testing:quiet', today, 70, 70),
      ]);
    } finally {
      await runtime.close();
    }
  });

  it('lists the busiest groups of the environment over the last 30 days, by verifications unless asked', async () => {
    const printed = await box.ugs('usage', '--json');
    expect(printed.stdout).toMatch(/^[^\n]+\n$/); // one line, ended like every line a shell reads
    const rows = jsonOutput<Array<Record<string, unknown>>>(printed);
    expect(rows).toEqual([
      {
        team_id: teamIds['Customer:busy'],
        user_group_id: 'busy',
        name: 'busy',
        embed_tokens_minted: 1,
        verifications: 50,
        reads: 3,
      },
      {
        team_id: teamIds['Customer:quiet'],
        user_group_id: 'quiet',
        name: 'quiet',
        embed_tokens_minted: 1,
        verifications: 2,
        reads: 9,
      },
    ]);
    const byReads = jsonOutput<Array<{ user_group_id: string }>>(
      await box.ugs('usage', '--json', '--metric', 'reads', '--limit', '1'),
    );
    expect(byReads.map((row) => row.user_group_id)).toEqual(['quiet']);
    const testing = jsonOutput<Array<{ reads: number }>>(await box.ugs('usage', '--json', '--environment', 'Testing'));
    expect(testing).toMatchObject([{ user_group_id: 'quiet', reads: 70 }]);
    // As a table for people.
    const table = await box.ugs('usage');
    expect(table.stdout).toMatch(/busy/);
  });

  it("shows one group's days with --group", async () => {
    const printed = await box.ugs(
      'usage',
      '--group',
      'busy',
      '--since',
      '2025-12-31',
      '--until',
      '2026-01-02',
      '--json',
    );
    expect(printed.stdout).toMatch(/^[^\n]+\n$/);
    const series = jsonOutput<{ user_group_id: string; days: Array<{ day: string; reads: number }> }>(printed);
    expect(series.user_group_id).toBe('busy');
    expect(series.days.map((day) => [day.day, day.reads])).toEqual([
      ['2025-12-31', 0],
      ['2026-01-01', 100],
      ['2026-01-02', 0],
    ]);
  });

  it('refuses a date that is none, a range too long, and a group that does not exist, cleanly', async () => {
    expectCleanFailure(await box.ugs('usage', '--since', '2026-02-30'), /"since" must be a UTC date/);
    expectCleanFailure(await box.ugs('usage', '--since', '2024-01-01', '--until', '2026-01-01'), /400 days/);
    expectCleanFailure(await box.ugs('usage', '--group', 'nobody'), /not found|no user group/i);
  });
});
