import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm';
import { Alert, Badge, Loading, OnceSecret, PageHeader, Section, Select, TextField, Time } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
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
  const tokens = useLoad(() => api<{ api_tokens: ApiToken[] }>('GET', '/api/admin/api_tokens', { query: { environment } }), [environment]);
  const [draft, setDraft] = useState<{ name: string; scope: Scope }>({ name: '', scope: 'read' });
  const [issued, setIssued] = useState<IssuedApiToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const create = useSubmit();
  const revoke = useSubmit();

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = await create.run(() => api<{ api_token: IssuedApiToken }>('POST', '/api/admin/api_tokens', { body: { ...draft, environment } }), ['name', 'scope']);
    if (!body) return;
    setIssued(body.api_token);
    setDraft({ name: '', scope: 'read' });
    tokens.reload();
  };
  const confirmRevoke = async () => {
    const target = revoking;
    if (!target) return;
    const done = await revoke.run(() => api('DELETE', `/api/admin/api_tokens/${target.id}`));
    setRevoking(null);
    if (done) {
      announce(`Revoked API token ${target.name}.`);
      tokens.reload();
    }
  };

  return (
    <>
      <PageHeader title="API tokens" />
      <Section title={`Create a token in ${environment}`}>
        {issued ? (
          <OnceSecret title={`The secret of API token “${issued.name}” (${issued.scope})`} secret={issued.token} onDone={() => setIssued(null)} />
        ) : (
          <form class="inline-form" onSubmit={(event) => void submit(event)}>
            {create.failure && <Alert>{create.failure}</Alert>}
            <TextField label="Name" name="name" required value={draft.name} error={create.errors.name} onValue={(name) => setDraft({ ...draft, name })} />
            <Select label="Scope" value={draft.scope} options={SCOPES} error={create.errors.scope} onValue={(scope) => setDraft({ ...draft, scope })} />
            <div class="inline-submit">
              <button type="submit" disabled={create.busy}>
                Create token
              </button>
            </div>
          </form>
        )}
      </Section>
      <Section title={`Live tokens in ${environment}`}>
        {revoke.failure && <Alert>{revoke.failure}</Alert>}
        {tokens.error && <Alert>{tokens.error.message}</Alert>}
        {!tokens.data && !tokens.error && <Loading what="API tokens" />}
        {tokens.data && (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <caption class="visually-hidden">Live API tokens in {environment}</caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Rate limit</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.api_tokens.map((token) => (
                  <tr key={token.id}>
                    <td>{token.id}</td>
                    <td>
                      {token.name} {token.id === self.id && <Badge tone="accent">this session</Badge>}
                    </td>
                    <td>
                      <Badge tone={token.scope === 'admin' ? 'warn' : 'neutral'}>{token.scope}</Badge>
                    </td>
                    <td>{token.rate_limit ? `${token.rate_limit.per_second}/s, burst ${token.rate_limit.burst}` : <span class="muted">default</span>}</td>
                    <td>
                      <Time at={token.created_at} />
                    </td>
                    <td>
                      <Time at={token.last_used_at} />
                    </td>
                    <td>
                      <button type="button" class="danger small" aria-label={`Revoke ${token.name}`} onClick={() => setRevoking(token)}>
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      {revoking && (
        <ConfirmDialog title="Revoke the API token?" confirm="Revoke" danger busy={revoke.busy} onConfirm={() => void confirmRevoke()} onCancel={() => setRevoking(null)}>
          <p>
            <strong>{revoking.name}</strong> ({revoking.scope}) is refused from its next request on, on every instance.
            {revoking.id === self.id && ' It is the token of this session: you will be signed out.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
