import { BASE } from '../router';
import type { AuditEvent } from '../types';
import { DataTable, type Column } from './data-table';
import { Time } from './ui';

function actorOf(event: AuditEvent) {
  const { actor } = event;
  if (actor.type === 'cli') return 'command line';
  if (actor.type === 'person') {
    // A person is (issuer, sub); the email is what a reader recognises. The link filters by the person.
    const query = new URLSearchParams({ person_issuer: actor.issuer ?? '', person_sub: actor.sub ?? '' });
    return (
      <a href={`${BASE}/audit?${query.toString()}`} title={`${actor.sub ?? ''} at ${actor.issuer ?? ''}`}>
        {actor.email ?? actor.sub}
      </a>
    );
  }
  return `${actor.name ?? 'API token'} (#${actor.api_token_id})`;
}

function groupOf(event: AuditEvent) {
  if (event.team_id === null) return <span class="muted">—</span>;
  return <a href={`${BASE}/groups/${event.team_id}`}>{event.provided_id ?? `#${event.team_id}`}</a>;
}

/** One line per changed field: `name: "a" → "b"` (an audit event's changes, a sync plan's). */
export function Changes({ changes }: { changes: AuditEvent['changes'] | undefined }) {
  if (!changes || Object.keys(changes).length === 0) return <span class="muted">—</span>;
  return (
    <ul class="changes">
      {Object.entries(changes as Record<string, { before: unknown; after: unknown }>).map(
        ([field, { before, after }]) => (
          <li key={field}>
            <code>{field}</code>: <span class="before">{JSON.stringify(before)}</span> →{' '}
            <span class="after">{JSON.stringify(after)}</span>
          </li>
        ),
      )}
    </ul>
  );
}

/** Audit events, newest first, with what changed; `withGroup` adds the group each event is about. */
export function AuditTable({
  events,
  withGroup,
  caption,
}: {
  events: AuditEvent[];
  withGroup: boolean;
  caption: string;
}) {
  const columns: Array<Column<AuditEvent>> = [
    { header: 'When', class: 'nowrap', cell: (event) => <Time at={event.at} /> },
    {
      header: 'Action',
      cell: (event) => (
        <>
          <code>{event.action}</code>
          {event.environment && <span class="muted"> · {event.environment}</span>}
        </>
      ),
    },
    ...(withGroup ? [{ header: 'User group', cell: groupOf }] : []),
    { header: 'Who', cell: actorOf },
    { header: 'Changes', cell: (event) => <Changes changes={event.changes} /> },
  ];
  return <DataTable caption={caption} columns={columns} rows={events} rowKey={(event) => event.id} />;
}
