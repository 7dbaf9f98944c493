import { BASE } from '../router';
import type { AuditEvent } from '../types';
import { Time } from './ui';

function actorOf(event: AuditEvent): string {
  return event.actor.type === 'cli' ? 'command line' : `${event.actor.name ?? 'API token'} (#${event.actor.api_token_id})`;
}

/** One line per changed field: `name: "a" → "b"`. */
function Changes({ changes }: { changes: AuditEvent['changes'] }) {
  if (!changes || Object.keys(changes).length === 0) return <span class="muted">—</span>;
  return (
    <ul class="changes">
      {Object.entries(changes as Record<string, { before: unknown; after: unknown }>).map(([field, { before, after }]) => (
        <li key={field}>
          <code>{field}</code>: <span class="before">{JSON.stringify(before)}</span> → <span class="after">{JSON.stringify(after)}</span>
        </li>
      ))}
    </ul>
  );
}

/** Audit events, newest first, with what changed; `withGroup` adds the group each event is about. */
export function AuditTable({ events, withGroup, caption }: { events: AuditEvent[]; withGroup: boolean; caption: string }) {
  return (
    <div class="table-scroll" tabIndex={0}>
      <table class="audit">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            {withGroup && <th scope="col">User group</th>}
            <th scope="col">Who</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td class="nowrap">
                <Time at={event.at} />
              </td>
              <td>
                <code>{event.action}</code>
                {event.environment && <span class="muted"> · {event.environment}</span>}
              </td>
              {withGroup && <td>{event.team_id === null ? <span class="muted">—</span> : <a href={`${BASE}/groups/${event.team_id}`}>{event.provided_id ?? `#${event.team_id}`}</a>}</td>}
              <td>{actorOf(event)}</td>
              <td>
                <Changes changes={event.changes} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
