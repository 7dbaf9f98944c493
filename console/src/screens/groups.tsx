import { useState } from 'preact/hooks';
import { DataTable, Rows, type Column } from '../components/data-table';
import { Badge, PageHeader, Pager, Select, TextField, Time } from '../components/ui';
import { useConsole, usePages } from '../hooks';
import { BASE } from '../router';
import { given, ugs } from '../service';
import type { UserGroup } from '../types';

const COLUMNS: Array<Column<UserGroup>> = [
  {
    header: 'User group id',
    cell: (group) => (
      <>
        <a href={`${BASE}/groups/${group.team_id}`}>{group.provided_id}</a>
        {group.is_demo_group && (
          <>
            {' '}
            <Badge tone="warn">demo</Badge>
          </>
        )}
      </>
    ),
  },
  { header: 'Name', cell: (group) => group.name },
  { header: 'Parent', cell: (group) => group.parent_user_group_id ?? <span class="muted">—</span> },
  { header: 'Tags', cell: (group) => group.tags.map((tag) => <Badge key={tag}>{tag}</Badge>) },
  { header: 'Updated', cell: (group) => <Time at={group.updated_at} /> },
];

const DEMO_OPTIONS = [
  ['', 'Any'],
  ['true', 'Demo groups only'],
  ['false', 'No demo groups'],
] as const;

/** Find groups: search by id prefix or name, filter by parent, tag and demo flag, page through. */
export function GroupsScreen() {
  const { environment, token } = useConsole();
  const [draft, setDraft] = useState({ q: '', parent: '', tag: '', demo: '' as '' | 'true' | 'false' });
  const [filters, setFilters] = useState(draft);
  const page = usePages(
    (cursor) =>
      ugs.listUserGroups({
        environment,
        q: given(filters.q),
        parent: given(filters.parent),
        tag: given(filters.tag),
        is_demo_group: given(filters.demo),
        limit: '25',
        cursor,
      }),
    [environment, filters],
  );
  const search = (event: Event) => {
    event.preventDefault();
    setFilters({ ...draft });
  };
  return (
    <>
      <PageHeader title="User groups">
        {environment === token.environment && token.scope !== 'read' && (
          <a class="button" href={`${BASE}/groups/new`}>
            New group
          </a>
        )}
      </PageHeader>
      <form class="card filters" role="search" aria-label="Find user groups" onSubmit={search}>
        <TextField
          label="Search"
          type="search"
          name="q"
          placeholder="id prefix or name"
          value={draft.q}
          onValue={(q) => setDraft({ ...draft, q })}
        />
        <TextField
          label="Parent"
          name="parent"
          placeholder="user_group_id"
          value={draft.parent}
          onValue={(parent) => setDraft({ ...draft, parent })}
        />
        <TextField label="Tag" name="tag" value={draft.tag} onValue={(tag) => setDraft({ ...draft, tag })} />
        <Select
          label="Demo groups"
          value={draft.demo}
          options={DEMO_OPTIONS}
          onValue={(demo) => setDraft({ ...draft, demo })}
        />
        <div class="filters-submit">
          <button type="submit">Search</button>
        </div>
      </form>
      <section class="card" aria-label="User groups found">
        <Rows
          load={page}
          items={page.data?.items}
          what="user groups"
          empty={`No user group in ${environment} matches.`}
        >
          {(groups) => (
            <DataTable
              caption={`User groups in ${environment}`}
              columns={COLUMNS}
              rows={groups}
              rowKey={(group) => group.team_id}
            />
          )}
        </Rows>
        <Pager label="User groups" number={page.number} previous={page.previous} next={page.next} />
      </section>
    </>
  );
}
