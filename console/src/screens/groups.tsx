import { useState } from 'preact/hooks';
import { list } from '../api';
import { Alert, Badge, Loading, PageHeader, Pager, Select, TextField, Time } from '../components/ui';
import { useConsole, usePages } from '../hooks';
import { BASE } from '../router';
import type { UserGroup } from '../types';

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
      list<UserGroup>('/api/admin/user_groups', 'user_groups', {
        environment,
        q: filters.q,
        parent: filters.parent,
        tag: filters.tag,
        is_demo_group: filters.demo,
        limit: 25,
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
        {environment === token.environment && (
          <a class="button" href={`${BASE}/groups/new`}>
            New group
          </a>
        )}
      </PageHeader>
      <form class="card filters" role="search" aria-label="Find user groups" onSubmit={search}>
        <TextField label="Search" type="search" name="q" placeholder="id prefix or name" value={draft.q} onValue={(q) => setDraft({ ...draft, q })} />
        <TextField label="Parent" name="parent" placeholder="user_group_id" value={draft.parent} onValue={(parent) => setDraft({ ...draft, parent })} />
        <TextField label="Tag" name="tag" value={draft.tag} onValue={(tag) => setDraft({ ...draft, tag })} />
        <Select label="Demo groups" value={draft.demo} options={DEMO_OPTIONS} onValue={(demo) => setDraft({ ...draft, demo })} />
        <div class="filters-submit">
          <button type="submit">Search</button>
        </div>
      </form>
      <section class="card" aria-label="User groups found">
        {page.error && <Alert>{page.error.message}</Alert>}
        {page.loading && !page.data && <Loading what="user groups" />}
        {page.data && page.data.items.length === 0 && <p class="muted">No user group in {environment} matches.</p>}
        {page.data && page.data.items.length > 0 && (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <caption class="visually-hidden">User groups in {environment}</caption>
              <thead>
                <tr>
                  <th scope="col">User group id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Parent</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {page.data.items.map((group) => (
                  <tr key={group.team_id}>
                    <td>
                      <a href={`${BASE}/groups/${group.team_id}`}>{group.provided_id}</a>
                      {group.is_demo_group && (
                        <>
                          {' '}
                          <Badge tone="warn">demo</Badge>
                        </>
                      )}
                    </td>
                    <td>{group.name}</td>
                    <td>{group.parent_user_group_id ?? <span class="muted">—</span>}</td>
                    <td>
                      {group.tags.map((tag) => (
                        <Badge key={tag}>{tag}</Badge>
                      ))}
                    </td>
                    <td>
                      <Time at={group.updated_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager label="User groups" number={page.number} previous={page.previous} next={page.next} />
      </section>
    </>
  );
}
