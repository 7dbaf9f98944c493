import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../components/confirm';
import { buttonColumn, DataTable, Rows, type Column } from '../components/data-table';
import { Alert, Badge, InlineSubmit, OnceSecret, PageHeader, Section, Select, TextField, Time } from '../components/ui';
import { useConfirmation, useConsole, useLoad, useSubmit } from '../hooks';
import { ugs } from '../service';
import type { ApiToken, IssuedApiToken } from '../types';

type Scope = 'read' | 'write' | 'admin';
const SCOPES = [
  ['read', 'read: verify and read groups'],
  ['write', 'write: also create, change, rotate, delete'],
  ['admin', 'admin: also this console and the admin API'],
] as const;

/** API tokens of the environment: create (the secret shown once), list, revoke. */
export function ApiTokensScreen() {
  const { environment, token: self, announce } = useConsole();
  const tokens = useLoad(() => ugs.listApiTokens({ environment }), [environment]);
  const [draft, setDraft] = useState<{ name: string; scope: Scope }>({ name: '', scope: 'read' });
  const [issued, setIssued] = useState<IssuedApiToken | null>(null);
  const create = useSubmit();
  const revoke = useConfirmation(
    (token: ApiToken) => ugs.revokeApiToken(token.id),
    (token) => {
      announce(`Revoked API token ${token.name}.`);
      tokens.reload();
    },
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    const issuedToken = await create.run(() => ugs.createApiToken({ ...draft, environment }), ['name', 'scope']);
    if (!issuedToken) return;
    setIssued(issuedToken);
    setDraft({ name: '', scope: 'read' });
    tokens.reload();
  };

  const columns: Array<Column<ApiToken>> = [
    { header: 'Id', cell: (token) => token.id },
    {
      header: 'Name',
      cell: (token) => (
        <>
          {token.name} {token.id === self.id && <Badge tone="accent">this session</Badge>}
        </>
      ),
    },
    {
      header: 'Scope',
      cell: (token) => <Badge tone={token.scope === 'admin' ? 'warn' : 'neutral'}>{token.scope}</Badge>,
    },
    {
      header: 'Rate limit',
      cell: (token) =>
        token.rate_limit ? (
          `${token.rate_limit.per_second}/s, burst ${token.rate_limit.burst}`
        ) : (
          <span class="muted">default</span>
        ),
    },
    { header: 'Created', cell: (token) => <Time at={token.created_at} /> },
    { header: 'Last used', cell: (token) => <Time at={token.last_used_at} /> },
    buttonColumn<ApiToken>('Revoke', (token) => token.name, revoke.ask, 'danger'),
  ];

  return (
    <>
      <PageHeader title="API tokens" />
      <Section title={`Create a token in ${environment}`}>
        {issued ? (
          <OnceSecret
            title={`The secret of API token “${issued.name}” (${issued.scope})`}
            secret={issued.token}
            onDone={() => setIssued(null)}
          />
        ) : (
          <form class="inline-form" onSubmit={(event) => void submit(event)}>
            {create.failure && <Alert>{create.failure}</Alert>}
            <TextField
              label="Name"
              name="name"
              required
              value={draft.name}
              error={create.errors.name}
              onValue={(name) => setDraft({ ...draft, name })}
            />
            <Select
              label="Scope"
              value={draft.scope}
              options={SCOPES}
              error={create.errors.scope}
              onValue={(scope) => setDraft({ ...draft, scope })}
            />
            <InlineSubmit label="Create token" busy={create.busy} />
          </form>
        )}
      </Section>
      <Section title={`Live tokens in ${environment}`}>
        {revoke.failure && <Alert>{revoke.failure}</Alert>}
        <Rows load={tokens} items={tokens.data?.items} what="API tokens" empty={`No live API token in ${environment}.`}>
          {(rows) => (
            <DataTable
              caption={`Live API tokens in ${environment}`}
              columns={columns}
              rows={rows}
              rowKey={(token) => token.id}
            />
          )}
        </Rows>
      </Section>
      {revoke.pending && (
        <ConfirmDialog
          title="Revoke the API token?"
          confirm="Revoke"
          danger
          busy={revoke.busy}
          onConfirm={() => void revoke.confirm()}
          onCancel={revoke.cancel}
        >
          <p>
            <strong>{revoke.pending.name}</strong> ({revoke.pending.scope}) is refused from its next request on, on
            every instance.
            {revoke.pending.id === self.id && ' It is the token of this session: you will be signed out.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
