import { ConfirmDialog } from '../components/confirm';
import { DataTable, Rows, type Column } from '../components/data-table';
import { Alert, Badge, PageHeader, Section, Time } from '../components/ui';
import { useConfirmation, useConsole, useLoad } from '../hooks';
import { ugs } from '../service';
import type { PersonSession } from '../types';

/** How a person is shown: their email when the provider gave one (it only labels), else their sub. */
const nameOf = (session: PersonSession) => session.email ?? session.sub;

/**
 * The console sessions of people signed in through the identity provider, in this workspace (an admin's
 * page; the API refuses anyone else): who, with what access, since when; end one, or all of a person's.
 */
export function PeopleSessionsScreen() {
  const { announce } = useConsole();
  const sessions = useLoad(() => ugs.listPersonSessions(), []);
  const endOne = useConfirmation(
    (session: PersonSession) => ugs.endPersonSession(session.id),
    (session) => {
      announce(`Ended console session ${session.id} of ${nameOf(session)}.`);
      sessions.reload();
    },
  );
  const endAll = useConfirmation(
    (session: PersonSession) => ugs.endPersonSessions({ issuer: session.issuer, sub: session.sub }),
    (session) => {
      announce(`Ended every console session of ${nameOf(session)}.`);
      sessions.reload();
    },
  );

  const columns: Array<Column<PersonSession>> = [
    { header: 'Id', cell: (session) => session.id },
    {
      header: 'Person',
      class: 'break',
      cell: (session) => (
        <>
          {nameOf(session)}
          <br />
          <span class="muted">
            {session.sub} at {session.issuer}
          </span>
        </>
      ),
    },
    { header: 'Acting in', cell: (session) => session.environment },
    {
      header: 'Access',
      cell: (session) =>
        session.access.map((tenant) => (
          <Badge
            key={`${tenant.workspace} ${tenant.environment}`}
            tone={tenant.access === 'admin' ? 'warn' : 'neutral'}
          >
            {`${tenant.workspace} ${tenant.environment}: ${tenant.access}`}
          </Badge>
        )),
    },
    { header: 'Signed in', cell: (session) => <Time at={session.created_at} /> },
    { header: 'Last seen', cell: (session) => <Time at={session.last_seen_at} /> },
    { header: 'Expires', cell: (session) => <Time at={session.expires_at} /> },
    {
      header: 'Actions',
      hiddenHeader: true,
      cell: (session) => (
        <>
          <button
            type="button"
            class="danger small"
            aria-label={`End session ${session.id} of ${nameOf(session)}`}
            onClick={() => endOne.ask(session)}
          >
            End
          </button>{' '}
          <button
            type="button"
            class="danger small"
            aria-label={`End all sessions of ${nameOf(session)}`}
            onClick={() => endAll.ask(session)}
          >
            End all
          </button>
        </>
      ),
    },
  ];

  return (
    <>
      <PageHeader title="People's sessions" />
      <Section title="Console sessions of people in this workspace (newest first)">
        {endOne.failure && <Alert>{endOne.failure}</Alert>}
        {endAll.failure && <Alert>{endAll.failure}</Alert>}
        <Rows
          load={sessions}
          items={sessions.data}
          what="console sessions"
          empty="Nobody is signed in through the identity provider in this workspace."
        >
          {(rows) => (
            <DataTable
              caption="Console sessions of people"
              columns={columns}
              rows={rows}
              rowKey={(session) => session.id}
            />
          )}
        </Rows>
      </Section>
      {endOne.pending && (
        <ConfirmDialog
          title="End this console session?"
          confirm="End session"
          danger
          busy={endOne.busy}
          onConfirm={() => void endOne.confirm()}
          onCancel={endOne.cancel}
        >
          <p>
            Session {endOne.pending.id} of <strong>{nameOf(endOne.pending)}</strong> is refused from its next request
            on, on every instance. They can sign in again while the identity provider's groups allow it.
          </p>
        </ConfirmDialog>
      )}
      {endAll.pending && (
        <ConfirmDialog
          title="End every session of this person?"
          confirm="End all sessions"
          danger
          busy={endAll.busy}
          onConfirm={() => void endAll.confirm()}
          onCancel={endAll.cancel}
        >
          <p>
            Every console session of <strong>{nameOf(endAll.pending)}</strong> in this workspace is refused from its
            next request on, on every instance. To keep them out, remove them from the groups at the identity provider.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
