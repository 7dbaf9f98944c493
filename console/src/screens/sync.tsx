import { useRef, useState } from 'preact/hooks';
import { Changes } from '../components/audit-table';
import { DataTable, type Column } from '../components/data-table';
import { Alert, Badge, FileField, PageHeader, Section, TextField } from '../components/ui';
import { useConsole, type Environment } from '../hooks';
import { BASE } from '../router';
import { UgsError, ugs } from '../service';
import type { SyncPlanItem, UserGroupSync } from '../types';

/*
 * Sync (docs/api.md#sync-tenants-as-code, tenants as code) from a file chosen in the page: a dry run shows the plan, and only
 * a plan of exactly this file, prune tag and environment unlocks "Apply" (docs/adr/0024-admin-console.md). The file
 * goes to POST /api/admin/user_groups/sync as it is, through @ugs/client; the page never parses it,
 * except to name the group of a line or item the API refused.
 */

/** What a sync is asked; a dry run answers for exactly these. */
interface SyncInputs {
  text: string;
  prune: string;
  environment: Environment;
}

const sameInputs = (a: SyncInputs, b: SyncInputs) =>
  a.text === b.text && a.prune === b.prune && a.environment === b.environment;

type Outcome =
  | { kind: 'plan'; sync: UserGroupSync; inputs: SyncInputs }
  /** `planned`: the counts of the dry run it followed, when it followed one of the same inputs. */
  | { kind: 'applied'; sync: UserGroupSync; inputs: SyncInputs; planned: UserGroupSync['summary'] | undefined }
  | { kind: 'refused'; where: string | undefined; message: string };

const ACCEPT = '.ndjson,.jsonl,.json,application/json,application/x-ndjson';
/** The plan's table lists this many changed groups at most (docs/adr/0024-admin-console.md); the counts are always the whole plan's. */
const MAX_LISTED = 1000;

const groupCount = (count: number) => `${count.toLocaleString()} ${count === 1 ? 'group' : 'groups'}`;
const changeCount = ({ create, update, delete: deleted }: UserGroupSync['summary']) => create + update + deleted;
const sameSummary = (a: UserGroupSync['summary'], b: UserGroupSync['summary']) =>
  a.create === b.create && a.update === b.update && a.unchanged === b.unchanged && a.delete === b.delete;

/** The user_group_id at an NDJSON line (from 1) or array index (from 0) of the file, when it has one. */
function groupIdAt(text: string, at: { line: number | undefined; index: number | undefined }): string | undefined {
  const content = text.replace(/^\uFEFF/, '');
  try {
    const value: unknown =
      at.line !== undefined
        ? JSON.parse(content.split('\n')[at.line - 1] ?? '')
        : (JSON.parse(content) as unknown[])[at.index!];
    const id = (value as { user_group_id?: unknown } | null | undefined)?.user_group_id;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}

/** A refusal, placed: the line or item the API names (docs/api.md#sync-tenants-as-code) and the group there, then the API's message. */
function refusalOf(error: unknown, text: string): Extract<Outcome, { kind: 'refused' }> {
  if (!(error instanceof UgsError) || (error.line === undefined && error.index === undefined))
    return { kind: 'refused', where: undefined, message: (error as Error).message };
  const position = error.line !== undefined ? `Line ${error.line}` : `Item ${error.index}`;
  const id = groupIdAt(text, error);
  return {
    kind: 'refused',
    where: id === undefined ? position : `${position}, group “${id}”`,
    // The API's message starts with the position too ("Line 7: …"), which `where` already says.
    message: error.message.replace(/^(Line|Item) \d+: /, ''),
  };
}

/** The sentence the status region announces after a dry run or an apply. */
function describe(sync: UserGroupSync, environment: Environment): string {
  const { create, update, unchanged, delete: deleted } = sync.summary;
  if (changeCount(sync.summary) === 0)
    return `${sync.dry_run ? 'Dry run' : 'Nothing applied'} in ${environment}: nothing to do, ${
      unchanged === 1 ? 'the one group of the file already matches' : `all ${unchanged} groups already match the file`
    }.`;
  if (sync.dry_run)
    return `Dry run in ${environment}: ${create} to create, ${update} to update, ${unchanged} unchanged, ${deleted} to delete. Nothing was changed.`;
  return `Applied in ${environment}: ${create} created, ${update} updated, ${unchanged} unchanged, ${deleted} deleted (${sync.id}).`;
}

const TONES = { create: 'good', update: 'accent', delete: 'bad', unchanged: 'neutral' } as const;

/** The plan's columns; after an apply, a deleted group is no longer a page to link to. */
const planColumns = (applied: boolean): Array<Column<SyncPlanItem>> => [
  {
    header: 'In the file',
    class: 'nowrap',
    cell: (item) =>
      item.line !== undefined ? (
        `line ${item.line}`
      ) : item.index !== undefined ? (
        `item ${item.index}`
      ) : (
        <span class="muted">not in the file</span>
      ),
  },
  {
    header: 'User group',
    cell: (item) =>
      item.team_id === null || (applied && item.action === 'delete') ? (
        <code>{item.user_group_id}</code>
      ) : (
        <a href={`${BASE}/groups/${item.team_id}`}>{item.user_group_id}</a>
      ),
  },
  { header: 'Action', cell: (item) => <Badge tone={TONES[item.action]}>{item.action}</Badge> },
  { header: 'Changes (before → after)', cell: (item) => <Changes changes={item.changes} /> },
];

/** A dry run's plan or an apply's result: the counts, the changed groups field by field, the unchanged ones folded. */
function PlanView({ outcome }: { outcome: Extract<Outcome, { kind: 'plan' | 'applied' }> }) {
  const { sync, inputs } = outcome;
  const applied = outcome.kind === 'applied';
  const { create, update, unchanged, delete: deleted } = sync.summary;
  const counts: Array<[string, number]> = applied
    ? [
        ['Created', create],
        ['Updated', update],
        ['Unchanged', unchanged],
        ['Deleted', deleted],
      ]
    : [
        ['To create', create],
        ['To update', update],
        ['Unchanged', unchanged],
        ['To delete', deleted],
      ];
  const changed = sync.plan.filter((item) => item.action !== 'unchanged');
  const same = sync.plan.filter((item) => item.action === 'unchanged');
  const title = applied ? `Applied in ${inputs.environment}` : `Plan (dry run) for ${inputs.environment}`;
  return (
    <Section title={title}>
      {outcome.kind === 'applied' && outcome.planned && !sameSummary(outcome.planned, sync.summary) && (
        <Alert kind="info">
          The groups changed between the dry run and the apply: the apply planned again, and did what is shown here.
        </Alert>
      )}
      <ul class="stats" aria-label={applied ? 'What the sync did' : 'What the sync would do'}>
        {counts.map(([label, value]) => (
          <li key={label}>
            <span class="stat-value">{value}</span>
            <span class="stat-label">{label}</span>
          </li>
        ))}
      </ul>
      {changed.length === 0 ? (
        <p>Nothing to do: every group of the file already matches {inputs.environment}.</p>
      ) : (
        <>
          <h3>{applied ? 'The groups it changed' : 'The groups it would change'}</h3>
          <DataTable
            caption={applied ? `Changes applied in ${inputs.environment}` : `Changes planned for ${inputs.environment}`}
            columns={planColumns(applied)}
            rows={changed.slice(0, MAX_LISTED)}
            rowKey={(item) => `${item.action} ${item.user_group_id}`}
          />
          {changed.length > MAX_LISTED && (
            <p class="muted">
              The first {MAX_LISTED.toLocaleString()} of {changed.length.toLocaleString()} changed groups are listed;
              the counts above are the whole plan's.
            </p>
          )}
        </>
      )}
      {same.length > 0 && (
        <details>
          <summary>Unchanged: {groupCount(same.length)}</summary>
          <p class="break">{same.map((item) => item.user_group_id).join(', ')}</p>
        </details>
      )}
    </Section>
  );
}

export function SyncScreen() {
  const { environment, announce } = useConsole();
  const [file, setFile] = useState<{ name: string; size: number; text: string } | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const [prune, setPrune] = useState('');
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const choose = async (chosen: File | null) => {
    setFileError(undefined);
    if (!chosen) return setFile(null);
    try {
      setFile({ name: chosen.name, size: chosen.size, text: await chosen.text() });
    } catch (error) {
      setFile(null);
      setFileError(`The file could not be read: ${(error as Error).message}`);
    }
  };

  const current: SyncInputs | null = file && { text: file.text, prune, environment };
  const planned = outcome?.kind === 'plan' ? outcome : undefined;
  const stale = planned !== undefined && (current === null || !sameInputs(planned.inputs, current));
  const canApply = planned !== undefined && !stale && changeCount(planned.sync.summary) > 0 && !busy;
  const applyHint =
    planned === undefined
      ? 'Apply becomes available after a dry run of the chosen file.'
      : stale
        ? 'The file, the prune tag or the environment changed since the dry run: plan again before applying.'
        : changeCount(planned.sync.summary) === 0
          ? 'Nothing to apply: the dry run planned no change.'
          : `Applies the plan above in ${environment}, all or nothing.${
              planned.sync.summary.delete > 0 ? ` It deletes ${groupCount(planned.sync.summary.delete)}.` : ''
            }`;

  const run = async (dryRun: boolean) => {
    if (!current) return setFileError('Choose a file first.');
    const inputs = current;
    const before = outcome;
    setBusy(true);
    try {
      const sync = await ugs.syncUserGroups(inputs.text, {
        dryRun,
        environment: inputs.environment,
        ...(inputs.prune === '' ? {} : { prune: inputs.prune }),
      });
      setOutcome(
        dryRun
          ? { kind: 'plan', sync, inputs }
          : {
              kind: 'applied',
              sync,
              inputs,
              planned: before?.kind === 'plan' && sameInputs(before.inputs, inputs) ? before.sync.summary : undefined,
            },
      );
      announce(describe(sync, inputs.environment));
    } catch (error) {
      setOutcome(refusalOf(error, inputs.text));
      announce('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader title="Sync user groups" />
      <p class="subtitle">
        Make the groups of an environment match a file, as <code>ugs groups sync</code> does: plan first, then apply.
      </p>
      <Section title="Desired state">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run(true);
          }}
        >
          <div
            class={`drop-zone${dragging ? ' dragging' : ''}`}
            onDragOver={(event) => {
              event.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(event) => {
              event.preventDefault();
              setDragging(false);
              const files = event.dataTransfer?.files;
              if (!files?.length) return;
              // The input shows the dropped file as if it had been chosen there.
              if (input.current) input.current.files = files;
              void choose(files[0]!);
            }}
          >
            <FileField
              label="File"
              accept={ACCEPT}
              hint="A JSON array of user groups, or NDJSON (one group per line); or drop the file here."
              error={fileError}
              inputRef={input}
              onFile={(chosen) => void choose(chosen)}
            />
            {file && (
              <p class="muted">
                Read <code>{file.name}</code>, {file.size.toLocaleString()} bytes.
              </p>
            )}
          </div>
          <TextField
            label="Prune tag (optional)"
            hint="Also delete the groups that carry this tag and that the file leaves out; never any other group."
            value={prune}
            onValue={setPrune}
          />
          <p>
            Environment: <strong>{environment}</strong> (chosen in the top bar).
          </p>
          <div class="row">
            <button type="submit" disabled={busy}>
              Plan (dry run)
            </button>
            <button
              type="button"
              disabled={!canApply}
              aria-describedby="sync-apply-hint"
              onClick={() => void run(false)}
            >
              Apply
            </button>
          </div>
          <p class="hint" id="sync-apply-hint">
            {applyHint}
          </p>
        </form>
      </Section>
      {outcome?.kind === 'refused' && (
        <Alert>
          <div>
            <strong>The file was refused; nothing was changed.</strong>{' '}
            {outcome.where ? `${outcome.where}: ${outcome.message}` : outcome.message}
          </div>
        </Alert>
      )}
      {outcome && outcome.kind !== 'refused' && <PlanView outcome={outcome} />}
    </>
  );
}
