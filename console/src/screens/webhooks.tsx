import { useState } from 'preact/hooks';
import { api, list } from '../api';
import { ConfirmDialog } from '../components/confirm';
import { Alert, Badge, Checkbox, Loading, OnceSecret, PageHeader, Pager, Section, Select, TextField, Time } from '../components/ui';
import { useConsole, useLoad, usePages, useSubmit } from '../hooks';
import type { WebhookDelivery, WebhookEndpoint } from '../types';

const EVENT_TYPES = [
  'user_group.created',
  'user_group.updated',
  'user_group.token_rotated',
  'user_group.deleted',
  'api_token.created',
  'api_token.revoked',
  'signing_key.rotated',
] as const;

type Confirming = { kind: 'rotate' | 'delete'; endpoint: WebhookEndpoint } | null;

function CreateEndpoint({ onCreated }: { onCreated(): void }) {
  const { environment } = useConsole();
  const [draft, setDraft] = useState({ url: '', description: '', all: true, events: [] as string[] });
  const [secret, setSecret] = useState<string | null>(null);
  const { errors, failure, busy, run } = useSubmit();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { url: draft.url, description: draft.description, events: draft.all ? ['*'] : draft.events, environment };
    const created = await run(() => api<{ webhook_endpoint: { secret: string } }>('POST', '/api/admin/webhook_endpoints', { body }), ['url', 'events', 'description']);
    if (!created) return;
    setSecret(created.webhook_endpoint.secret);
    setDraft({ url: '', description: '', all: true, events: [] });
    onCreated();
  };
  if (secret) return <OnceSecret title="The endpoint's signing secret" secret={secret} onDone={() => setSecret(null)} />;
  const toggle = (type: string, on: boolean) => setDraft({ ...draft, events: on ? [...draft.events, type] : draft.events.filter((event) => event !== type) });
  return (
    <form onSubmit={(event) => void submit(event)}>
      {failure && <Alert>{failure}</Alert>}
      <div class="form-grid">
        <TextField label="URL" name="url" type="url" required placeholder="https://crm.example.com/hooks/ugs" value={draft.url} error={errors.url} onValue={(url) => setDraft({ ...draft, url })} />
        <TextField label="Description" name="description" value={draft.description} error={errors.description} onValue={(description) => setDraft({ ...draft, description })} />
      </div>
      <fieldset class="events">
        <legend>Events</legend>
        <Checkbox label="Every event" checked={draft.all} onChecked={(all) => setDraft({ ...draft, all })} />
        {!draft.all && EVENT_TYPES.map((type) => <Checkbox key={type} label={type} checked={draft.events.includes(type)} onChecked={(on) => toggle(type, on)} />)}
        {errors.events && <p class="field-error">{errors.events}</p>}
      </fieldset>
      <button type="submit" disabled={busy}>
        Create endpoint
      </button>
    </form>
  );
}

const STATUS_OPTIONS = [
  ['', 'Any status'],
  ['pending', 'Pending'],
  ['delivered', 'Delivered'],
  ['failed', 'Failed'],
] as const;
const STATUS_TONE = { pending: 'accent', delivered: 'good', failed: 'bad' } as const;

function Deliveries({ endpoints }: { endpoints: WebhookEndpoint[] }) {
  const { environment, announce } = useConsole();
  const [filters, setFilters] = useState({ endpoint: '', status: '' as '' | 'pending' | 'delivered' | 'failed' });
  const page = usePages(
    (cursor) => list<WebhookDelivery>('/api/admin/webhook_deliveries', 'webhook_deliveries', { environment, endpoint_id: filters.endpoint, status: filters.status, limit: 25, cursor }),
    [environment, filters],
  );
  const retry = useSubmit();
  const retryDelivery = async (delivery: WebhookDelivery) => {
    if (await retry.run(() => api('POST', `/api/admin/webhook_deliveries/${delivery.id}/retry`))) {
      announce(`Delivery ${delivery.id} is queued again.`);
      page.reload();
    }
  };
  return (
    <>
      <div class="filters">
        <Select
          label="Endpoint"
          value={filters.endpoint}
          options={[['', 'Every endpoint'] as const, ...endpoints.map((endpoint) => [String(endpoint.id), `#${endpoint.id} ${endpoint.description || endpoint.url}`] as const)]}
          onValue={(endpoint) => setFilters({ ...filters, endpoint })}
        />
        <Select label="Status" value={filters.status} options={STATUS_OPTIONS} onValue={(status) => setFilters({ ...filters, status })} />
      </div>
      {retry.failure && <Alert>{retry.failure}</Alert>}
      {page.error && <Alert>{page.error.message}</Alert>}
      {page.data && page.data.items.length === 0 && <p class="muted">No delivery matches.</p>}
      {page.data && page.data.items.length > 0 && (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <caption class="visually-hidden">Webhook deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last attempt</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.items.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{delivery.id}</td>
                  <td>
                    <code>{delivery.event_type}</code>
                  </td>
                  <td>#{delivery.endpoint_id}</td>
                  <td>
                    <Badge tone={STATUS_TONE[delivery.status]}>{delivery.status}</Badge>
                  </td>
                  <td>{delivery.attempts}</td>
                  <td>
                    <Time at={delivery.last_attempt_at} />
                    {delivery.last_response_status !== null && <span class="muted"> · HTTP {delivery.last_response_status}</span>}
                    {delivery.last_error && <span class="muted"> · {delivery.last_error}</span>}
                  </td>
                  <td>
                    <button type="button" class="secondary small" aria-label={`Retry delivery ${delivery.id}`} onClick={() => void retryDelivery(delivery)}>
                      Retry
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Deliveries" number={page.number} previous={page.previous} next={page.next} />
    </>
  );
}

/** Webhook endpoints (secret shown once; enable, disable, rotate, delete) and their deliveries (retry). */
export function WebhooksScreen() {
  const { environment, announce } = useConsole();
  const endpoints = useLoad(() => api<{ webhook_endpoints: WebhookEndpoint[] }>('GET', '/api/admin/webhook_endpoints', { query: { environment } }), [environment]);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [rotatedSecret, setRotatedSecret] = useState<string | null>(null);
  const action = useSubmit();

  const setEnabled = async (endpoint: WebhookEndpoint, enabled: boolean) => {
    if (await action.run(() => api('PATCH', `/api/admin/webhook_endpoints/${endpoint.id}`, { query: { environment }, body: { enabled } }))) {
      announce(`Endpoint ${endpoint.id} ${enabled ? 'enabled' : 'disabled'}.`);
      endpoints.reload();
    }
  };
  const confirm = async () => {
    if (!confirming) return;
    const { kind, endpoint } = confirming;
    const path = `/api/admin/webhook_endpoints/${endpoint.id}${kind === 'rotate' ? '/rotate_secret' : ''}`;
    const done = await action.run(() => api<{ webhook_endpoint: { secret?: string } }>(kind === 'rotate' ? 'POST' : 'DELETE', path, { query: { environment } }));
    setConfirming(null);
    if (!done) return;
    if (kind === 'rotate') setRotatedSecret(done.webhook_endpoint.secret ?? null);
    else announce(`Endpoint ${endpoint.id} deleted.`);
    endpoints.reload();
  };
  const rows = endpoints.data?.webhook_endpoints ?? [];

  return (
    <>
      <PageHeader title="Webhooks" />
      <Section title={`Create an endpoint in ${environment}`}>
        <CreateEndpoint onCreated={endpoints.reload} />
      </Section>
      <Section title={`Endpoints in ${environment}`}>
        {rotatedSecret && <OnceSecret title="The endpoint's new signing secret (the old one keeps signing for 24 hours)" secret={rotatedSecret} onDone={() => setRotatedSecret(null)} />}
        {action.failure && <Alert>{action.failure}</Alert>}
        {endpoints.error && <Alert>{endpoints.error.message}</Alert>}
        {!endpoints.data && !endpoints.error && <Loading what="webhook endpoints" />}
        {endpoints.data && rows.length === 0 && <p class="muted">No endpoint in {environment}.</p>}
        {rows.length > 0 && (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <caption class="visually-hidden">Webhook endpoints in {environment}</caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <td>{endpoint.id}</td>
                    <td class="break">
                      <code>{endpoint.url}</code>
                      {endpoint.description && <div class="muted">{endpoint.description}</div>}
                    </td>
                    <td>{endpoint.events.join(', ')}</td>
                    <td>{endpoint.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="bad">disabled</Badge>}</td>
                    <td>
                      <Time at={endpoint.created_at} />
                    </td>
                    <td class="actions">
                      <button type="button" class="secondary small" onClick={() => void setEnabled(endpoint, !endpoint.enabled)}>
                        {endpoint.enabled ? 'Disable' : 'Enable'}
                      </button>
                      <button type="button" class="secondary small" onClick={() => setConfirming({ kind: 'rotate', endpoint })}>
                        Rotate secret
                      </button>
                      <button type="button" class="danger small" onClick={() => setConfirming({ kind: 'delete', endpoint })}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <Section title="Deliveries">
        <Deliveries endpoints={rows} />
      </Section>
      {confirming && (
        <ConfirmDialog
          title={confirming.kind === 'rotate' ? 'Rotate the signing secret?' : 'Delete the endpoint?'}
          confirm={confirming.kind === 'rotate' ? 'Rotate secret' : 'Delete'}
          danger={confirming.kind === 'delete'}
          busy={action.busy}
          onConfirm={() => void confirm()}
          onCancel={() => setConfirming(null)}
        >
          <p>
            {confirming.kind === 'rotate'
              ? 'A new secret signs from now on; the current one keeps signing beside it for 24 hours.'
              : 'The endpoint and its deliveries are deleted; no further event is sent to it.'}{' '}
            <code>{confirming.endpoint.url}</code>
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
