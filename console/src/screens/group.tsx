import { useState } from 'preact/hooks';
import { AuditTable } from '../components/audit-table';
import { DataTable, type Column } from '../components/data-table';
import { ConfirmDialog } from '../components/confirm';
import { EmbedTokenPanel } from '../components/embed-token';
import { GROUP_FIELDS, GroupFields, groupDraft, groupFields, type GroupDraft } from '../components/group-form';
import { Alert, Badge, Json, Loading, PageHeader, Section, Time } from '../components/ui';
import { GroupUsage } from './usage';
import { useConsole, useLoad, useSubmit, type Environment } from '../hooks';
import { BASE, navigate } from '../router';
import { UgsError, ugs } from '../service';
import type { UserGroup } from '../types';

/** The tree has four levels at most (docs/api.md#hierarchy-demo-groups-and-tags): a group has three ancestors at most. */
const MAX_ANCESTORS = 3;

/** The group of a provided_id: the list's search is by prefix, so the exact one is picked from its pages. */
async function groupOf(providedId: string, environment: Environment): Promise<UserGroup | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const found = await ugs.listUserGroups({ environment, q: providedId, limit: '1000', cursor });
    const group = found.items.find((item) => item.provided_id === providedId);
    if (group || !found.next_cursor) return group;
    cursor = found.next_cursor;
  }
  return undefined;
}

/** The group's ancestors, nearest first: where its inherited values come from. */
async function ancestorsOf(group: UserGroup, environment: Environment): Promise<UserGroup[]> {
  const ancestors: UserGroup[] = [];
  for (let parent = group.parent_user_group_id; parent !== null && ancestors.length < MAX_ANCESTORS;) {
    const found = await groupOf(parent, environment);
    if (!found) break;
    ancestors.push(found);
    parent = found.parent_user_group_id;
  }
  return ancestors;
}

/** One level of the tree as the computed view reads it: the group or an ancestor, and its own values. */
interface Level {
  group: UserGroup;
  own: object | null;
}

/**
 * Computed values key by key, each with the level it comes from: the group itself, or the nearest
 * ancestor that sets it (a nearer level overrides a farther one, docs/api.md#hierarchy-demo-groups-and-tags).
 */
function Computed({
  levels,
  computed,
  label,
  keyName,
  describe = (value) => JSON.stringify(value),
}: {
  /** The group first, then its ancestors, nearest first. */
  levels: Level[];
  computed: object;
  label: string;
  keyName: string;
  describe?(value: unknown): string;
}) {
  const values = computed as Record<string, unknown>;
  const keys = Object.keys(values);
  if (keys.length === 0) return <p class="muted">None.</p>;
  const sourceOf = (key: string) => levels.findIndex(({ own }) => own !== null && key in own);
  const from = (key: string) => {
    const level = sourceOf(key);
    if (level === 0) return <Badge tone="accent">this group</Badge>;
    const ancestor = levels[level]?.group;
    if (!ancestor) return <Badge>inherited</Badge>;
    return (
      <Badge>
        inherited from <a href={`${BASE}/groups/${ancestor.team_id}`}>{ancestor.provided_id}</a>
      </Badge>
    );
  };
  const columns: Array<Column<string>> = [
    { header: keyName, cell: (key) => <code>{key}</code> },
    { header: 'Value', cell: (key) => <code>{describe(values[key])}</code> },
    { header: 'From', cell: from },
  ];
  return <DataTable caption={label} columns={columns} rows={keys} rowKey={(key) => key} compact />;
}

/** The group's effective access rules (docs/api.md#access-rules), each with the group it comes from: all of them must hold. */
function AccessRules({ group, ancestors }: { group: UserGroup; ancestors: UserGroup[] }) {
  const rules = group.computed_access_rules;
  if (rules.length === 0) return <p class="muted">None: tokens of this group carry no access rule.</p>;
  type Rule = (typeof rules)[number];
  const from = (rule: Rule) => {
    if (rule.team_id === group.team_id) return <Badge tone="accent">this group</Badge>;
    const ancestor = ancestors.find((level) => level.team_id === rule.team_id);
    return (
      <Badge>
        inherited from{' '}
        {ancestor ? <a href={`${BASE}/groups/${ancestor.team_id}`}>{ancestor.provided_id}</a> : `#${rule.team_id}`}
      </Badge>
    );
  };
  const columns: Array<Column<[Rule, number]>> = [
    { header: 'Schema', cell: ([rule]) => rule.schema_id },
    { header: 'Table', cell: ([rule]) => <code>{rule.table}</code> },
    { header: 'Column', cell: ([rule]) => <code>{rule.column}</code> },
    { header: 'Operator', cell: ([rule]) => <code>{rule.op}</code> },
    { header: 'Value', cell: ([rule]) => (rule.value === undefined ? '' : <code>{JSON.stringify(rule.value)}</code>) },
    { header: 'From', cell: ([rule]) => from(rule) },
  ];
  return (
    <DataTable
      caption="Effective access rules, the root's first"
      columns={columns}
      rows={rules.map((rule, index): [Rule, number] => [rule, index])}
      rowKey={([, index]) => String(index)}
      compact
    />
  );
}

function Details({ group, revealed, onReveal }: { group: UserGroup; revealed: boolean; onReveal(): void }) {
  return (
    <dl class="details">
      <dt>team_id</dt>
      <dd>{group.team_id}</dd>
      <dt>User group id</dt>
      <dd>
        <code>{group.provided_id}</code>
      </dd>
      <dt>Name</dt>
      <dd>{group.name}</dd>
      <dt>Environment</dt>
      <dd>{group.api_environment_tag}</dd>
      <dt>Parent</dt>
      <dd>
        {group.parent_user_group_id ? (
          <code>{group.parent_user_group_id}</code>
        ) : (
          <span class="muted">none (a root)</span>
        )}
      </dd>
      <dt>Tags</dt>
      <dd>
        {group.tags.length > 0 ? (
          group.tags.map((tag) => <Badge key={tag}>{tag}</Badge>)
        ) : (
          <span class="muted">none</span>
        )}
      </dd>
      <dt>Demo group</dt>
      <dd>{group.is_demo_group ? 'yes' : 'no'}</dd>
      <dt>Created</dt>
      <dd>
        <Time at={group.created_at} />
      </dd>
      <dt>Updated</dt>
      <dd>
        <Time at={group.updated_at} />
      </dd>
      <dt>Token</dt>
      <dd class="token-row">
        <code data-testid="group-token">{revealed ? group.token : 'ugt_' + '•'.repeat(16)}</code>
        <button type="button" class="secondary small" aria-pressed={revealed} onClick={onReveal}>
          {revealed ? 'Hide token' : 'Reveal token'}
        </button>
      </dd>
    </dl>
  );
}

type Pending = 'rotate' | 'delete' | null;

/** One group: every field, computed values, children, audit history; edit, rotate, delete, reveal, mint. */
export function GroupScreen({ teamId }: { teamId: number }) {
  const { environment, token, announce } = useConsole();
  const loaded = useLoad(async () => {
    const group = await ugs.getUserGroup(teamId, { environment });
    const [children, history, sources, ancestors] = await Promise.all([
      ugs.listUserGroups({ environment, parent: group.provided_id, limit: '100' }),
      ugs.listAuditEvents({ environment, team_id: String(teamId), limit: '20' }),
      ugs.listDataSources({ environment }),
      ancestorsOf(group, environment),
    ]);
    const dataSources = new Map(sources.items.map((source) => [String(source.id), source.provided_id]));
    return {
      group,
      ancestors,
      children: children.items,
      moreChildren: children.next_cursor !== null,
      history: history.items,
      dataSources,
    };
  }, [teamId, environment]);
  const [revealed, setRevealed] = useState(false);
  const [editing, setEditing] = useState<GroupDraft | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  const edit = useSubmit();
  const action = useSubmit();

  if (loaded.error) {
    return (
      <>
        <PageHeader title="User group" />
        <Alert>
          {loaded.error instanceof UgsError && loaded.error.status === 404
            ? `No user group ${teamId} in ${environment}.`
            : loaded.error.message}
        </Alert>
      </>
    );
  }
  if (!loaded.data) return <Loading what="the user group" />;
  const { group, ancestors, children, moreChildren, history, dataSources } = loaded.data;
  const levels = (own: (level: UserGroup) => object | null): Level[] =>
    [group, ...ancestors].map((level) => ({ group: level, own: own(level) }));
  const dataSource = (id: unknown) => `${dataSources.get(String(id)) ?? 'data source'} (#${String(id)})`;
  // /api/user acts in the API token's own environment: a group of the other one is shown, not changed.
  const writable = group.api_environment_tag === token.environment;

  const save = async (event: Event) => {
    event.preventDefault();
    if (!editing) return;
    const fields = groupFields(editing);
    if ('errors' in fields) return edit.setErrors(fields.errors);
    const saved = await edit.run(
      () => ugs.updateUserGroup({ user_group_id: group.provided_id, ...fields.body }),
      GROUP_FIELDS,
    );
    if (saved) {
      setEditing(null);
      announce(`Saved ${group.provided_id}.`);
      loaded.reload();
    }
  };
  const rotate = async () => {
    const rotated = await action.run(() => ugs.rotateUserGroupToken(group.token));
    setPending(null);
    if (rotated) {
      setRevealed(true);
      announce(`Rotated the token of ${group.provided_id}: the old token no longer works.`);
      loaded.reload();
    }
  };
  const remove = async () => {
    const removed = await action.run(
      async () => (await ugs.deleteUserGroup({ user_group_id: group.provided_id }), true),
    );
    setPending(null);
    if (removed) {
      navigate('/groups');
      announce(`Deleted ${group.provided_id}.`);
    }
  };

  return (
    <>
      <PageHeader title={group.name}>
        {writable && !editing && (
          <>
            <button type="button" onClick={() => setEditing(groupDraft(group))}>
              Edit
            </button>
            <button type="button" class="secondary" onClick={() => setPending('rotate')}>
              Rotate token
            </button>
            <button type="button" class="danger" onClick={() => setPending('delete')}>
              Delete
            </button>
          </>
        )}
      </PageHeader>
      <p class="subtitle">
        <code>{group.provided_id}</code> · {group.api_environment_tag}
        {group.is_demo_group && (
          <>
            {' '}
            <Badge tone="warn">demo</Badge>
          </>
        )}
      </p>
      {!writable && (
        <Alert kind="info">
          This group is in {group.api_environment_tag}; sign in with an admin token of {group.api_environment_tag} to
          change it.
        </Alert>
      )}
      {action.failure && <Alert>{action.failure}</Alert>}

      {editing ? (
        <Section title="Edit">
          {edit.failure && <Alert>{edit.failure}</Alert>}
          <form onSubmit={(event) => void save(event)} aria-label={`Edit ${group.provided_id}`}>
            <GroupFields draft={editing} onDraft={setEditing} errors={edit.errors} />
            <div class="row">
              <button type="submit" disabled={edit.busy}>
                Save
              </button>
              <button type="button" class="secondary" onClick={() => setEditing(null)}>
                Cancel
              </button>
            </div>
          </form>
        </Section>
      ) : (
        <div class="two-columns">
          <Section title="Details">
            <Details group={group} revealed={revealed} onReveal={() => setRevealed(!revealed)} />
          </Section>
          <div>
            <Section title="Computed properties">
              <Computed
                levels={levels((level) => level.properties)}
                computed={group.computed_properties}
                label="Computed properties"
                keyName="Property"
              />
            </Section>
            <Section title="Computed mapping">
              <Computed
                levels={levels((level) => level.mapping)}
                computed={group.computed_mapping}
                label="Computed mapping: schema id to data source"
                keyName="Schema id"
                describe={dataSource}
              />
            </Section>
          </div>
        </div>
      )}

      {!editing && (
        <Section title={`Access rules (${group.computed_access_rules.length})`}>
          <AccessRules group={group} ancestors={ancestors} />
        </Section>
      )}
      <Section title="Usage, last 30 days">
        <GroupUsage teamId={teamId} />
      </Section>

      <div class="two-columns">
        <Section title="Own properties">
          {group.properties ? <Json label="Own properties" value={group.properties} /> : <p class="muted">None.</p>}
        </Section>
        <Section title={`Children (${children.length}${moreChildren ? '+' : ''})`}>
          {children.length === 0 ? (
            <p class="muted">No group has this one as its parent.</p>
          ) : (
            <ul class="plain">
              {children.map((child) => (
                <li key={child.team_id}>
                  <a href={`${BASE}/groups/${child.team_id}`}>{child.provided_id}</a>{' '}
                  <span class="muted">{child.name}</span>
                </li>
              ))}
            </ul>
          )}
        </Section>
      </div>

      {writable && (
        <Section title="Embed token">
          <EmbedTokenPanel userGroupId={group.provided_id} />
        </Section>
      )}

      <Section
        title="Audit history"
        actions={<a href={`${BASE}/audit?team_id=${group.team_id}`}>All events of this group</a>}
      >
        {history.length === 0 ? (
          <p class="muted">No audit event.</p>
        ) : (
          <AuditTable events={history} withGroup={false} caption={`Audit history of ${group.provided_id}`} />
        )}
      </Section>

      {pending === 'rotate' && (
        <ConfirmDialog
          title="Rotate the token?"
          confirm="Rotate token"
          busy={action.busy}
          onConfirm={() => void rotate()}
          onCancel={() => setPending(null)}
        >
          <p>
            The current token of <code>{group.provided_id}</code> stops working at once, everywhere, and its embed
            tokens with it. Dashboards need the new token.
          </p>
        </ConfirmDialog>
      )}
      {pending === 'delete' && (
        <ConfirmDialog
          title="Delete the user group?"
          confirm="Delete"
          danger
          busy={action.busy}
          onConfirm={() => void remove()}
          onCancel={() => setPending(null)}
        >
          <p>
            <code>{group.provided_id}</code> and its token are deleted for good. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
