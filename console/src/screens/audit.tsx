import { useState } from 'preact/hooks';
import { AuditTable } from '../components/audit-table';
import { Alert, Loading, PageHeader, Pager, Select, TextField } from '../components/ui';
import { usePages } from '../hooks';
import { useLocation } from '../router';
import { given, ugs } from '../service';

const ENVIRONMENTS = [
  ['', 'Whole workspace'],
  ['Customer', 'Customer'],
  ['Testing', 'Testing'],
] as const;

/** A datetime-local value (the reader's time) as the RFC 3339 instant the API takes. */
const instant = (local: string) => (local === '' ? undefined : new Date(local).toISOString());

/** The audit trail: every change, newest first, filtered by environment, group, action and time. */
export function AuditScreen() {
  const { query } = useLocation();
  const initial = {
    environment: '' as '' | 'Customer' | 'Testing',
    teamId: query.get('team_id') ?? '',
    action: query.get('action') ?? '',
    personIssuer: query.get('person_issuer') ?? '',
    personSub: query.get('person_sub') ?? '',
    since: '',
    until: '',
  };
  const [draft, setDraft] = useState(initial);
  const [filters, setFilters] = useState(initial);
  const page = usePages(
    (cursor) =>
      ugs.listAuditEvents({
        environment: given(filters.environment),
        team_id: given(filters.teamId),
        action: given(filters.action),
        person_issuer: given(filters.personIssuer),
        person_sub: given(filters.personSub),
        since: instant(filters.since),
        until: instant(filters.until),
        limit: '25',
        cursor,
      }),
    [filters],
  );
  return (
    <>
      <PageHeader title="Audit trail" />
      <form
        class="card filters"
        role="search"
        aria-label="Filter the audit trail"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters({ ...draft });
        }}
      >
        <Select
          label="Environment"
          value={draft.environment}
          options={ENVIRONMENTS}
          onValue={(environment) => setDraft({ ...draft, environment })}
        />
        <TextField
          label="team_id"
          name="team_id"
          inputMode="numeric"
          value={draft.teamId}
          onValue={(teamId) => setDraft({ ...draft, teamId })}
        />
        <TextField
          label="Action"
          name="action"
          placeholder="e.g. user_group.updated"
          value={draft.action}
          onValue={(action) => setDraft({ ...draft, action })}
        />
        <TextField
          label="Person's sub"
          name="person_sub"
          value={draft.personSub}
          onValue={(personSub) => setDraft({ ...draft, personSub })}
        />
        <TextField
          label="Person's issuer"
          name="person_issuer"
          placeholder="the identity provider's issuer"
          value={draft.personIssuer}
          onValue={(personIssuer) => setDraft({ ...draft, personIssuer })}
        />
        <TextField
          label="Since"
          name="since"
          type="datetime-local"
          value={draft.since}
          onValue={(since) => setDraft({ ...draft, since })}
        />
        <TextField
          label="Until"
          name="until"
          type="datetime-local"
          value={draft.until}
          onValue={(until) => setDraft({ ...draft, until })}
        />
        <div class="filters-submit">
          <button type="submit">Filter</button>
        </div>
      </form>
      <section class="card" aria-label="Audit events">
        {page.error && <Alert>{page.error.message}</Alert>}
        {page.loading && !page.data && <Loading what="audit events" />}
        {page.data && page.data.items.length === 0 && <p class="muted">No audit event matches.</p>}
        {page.data && page.data.items.length > 0 && (
          <AuditTable events={page.data.items} withGroup caption="Audit events, newest first" />
        )}
        <Pager label="Audit events" number={page.number} previous={page.previous} next={page.next} />
      </section>
    </>
  );
}
