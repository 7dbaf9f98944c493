import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../components/confirm';
import { buttonColumn, DataTable, Rows, type Column } from '../components/data-table';
import {
  Alert,
  Badge,
  Checkbox,
  OnceSecret,
  PageHeader,
  Pager,
  Section,
  Select,
  TextField,
  Time,
} from '../components/ui';
import { useConsole, useLoad, usePages, useSubmit } from '../hooks';
import { given, ugs } from '../service';
import type { WebhookDelivery, WebhookEndpoint } from '../types';

type EventType = Exclude<WebhookEndpoint['events'][number], '*'>;

/** Each event an endpoint may ask for, with what it announces; the type makes the list exactly the API's. */
const EVENTS: Record<EventType, string> = {
  'user_group.created': 'a group was created',
  'user_group.updated': 'a group changed',
  'user_group.token_rotated': "a group's token was rotated",
  'user_group.deleted': 'a group was deleted',
  'embed_token.revoked': "a group's embed tokens (or one of them) were revoked",
  'api_token.created': 'an API token was created',
  'api_token.revoked': 'an API token was revoked',
  'signing_key.rotated': 'the signing key was rotated',
};

type Confirming = { kind: 'rotate' | 'delete'; endpoint: WebhookEndpoint } | null;

function CreateEndpoint({ onCreated }: { onCreated(): void }) {
  const { environment } = useConsole();
  const [draft, setDraft] = useState({ url: '', description: '', all: true, events: [] as string[] });
  const [secret, setSecret] = useState<string | null>(null);
  const { errors, failure, busy, run } = useSubmit();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = {
      url: draft.url,
      description: draft.description,
      events: draft.all ? ['*' as const] : (draft.events as EventType[]),
      environment,
    };
    const created = await run(() => ugs.createWebhookEndpoint(body), ['url', 'events', 'description']);
    if (!created) return;
    setSecret(created.secret);
    setDraft({ url: '', description: '', all: true, events: [] });
    onCreated();
  };
  if (secret)
    return <OnceSecret title="The endpoint's signing secret" secret={secret} onDone={() => setSecret(null)} />;
  const toggle = (type: string, on: boolean) =>
    setDraft({ ...draft, events: on ? [...draft.events, type] : draft.events.filter((event) => event !== type) });
  return (
    <form onSubmit={(event) => void submit(event)}>
      {failure && <Alert>{failure}</Alert>}
      <div class="form-grid">
        <TextField
          label="URL"
          name="url"
          type="url"
          required
          placeholder="https://crm.example.com/hooks/ugs"
          value={draft.url}
          error={errors.url}
          onValue={(url) => setDraft({ ...draft, url })}
        />
        <TextField
          label="Description"
          name="description"
          value={draft.description}
          error={errors.description}
          onValue={(description) => setDraft({ ...draft, description })}
        />
      </div>
      <fieldset class="events">
        <legend>Events</legend>
        <Checkbox label="Every event" checked={draft.all} onChecked={(all) => setDraft({ ...draft, all })} />
        {!draft.all &&
          Object.entries(EVENTS).map(([type, meaning]) => (
            <Checkbox
              key={type}
              label={`${type}: ${meaning}`}
              checked={draft.events.includes(type)}
              onChecked={(on) => toggle(type, on)}
            />
          ))}
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
    (cursor) =>
      ugs.listWebhookDeliveries({
        environment,
        endpoint_id: given(filters.endpoint),
        status: given(filters.status),
        limit: '25',
        cursor,
      }),
    [environment, filters],
  );
  const retry = useSubmit();
  const retryDelivery = async (delivery: WebhookDelivery) => {
    if (await retry.run(() => ugs.retryWebhookDelivery(delivery.id, { environment }))) {
      announce(`Delivery ${delivery.id} is queued again.`);
      page.reload();
    }
  };
  const columns: Array<Column<WebhookDelivery>> = [
    { header: 'Id', cell: (delivery) => delivery.id },
    { header: 'Event', cell: (delivery) => <code>{delivery.event_type}</code> },
    { header: 'Endpoint', cell: (delivery) => `#${delivery.endpoint_id}` },
    { header: 'Status', cell: (delivery) => <Badge tone={STATUS_TONE[delivery.status]}>{delivery.status}</Badge> },
    { header: 'Attempts', cell: (delivery) => delivery.attempts },
    {
      header: 'Last attempt',
      cell: (delivery) => (
        <>
          <Time at={delivery.last_attempt_at} />
          {delivery.last_response_status !== null && <span class="muted"> · HTTP {delivery.last_response_status}</span>}
          {delivery.last_error && <span class="muted"> · {delivery.last_error}</span>}
        </>
      ),
    },
    buttonColumn(
      'Retry',
      (delivery) => `delivery ${delivery.id}`,
      (delivery) => void retryDelivery(delivery),
      'secondary',
    ),
  ];
  return (
    <>
      <div class="filters">
        <Select
          label="Endpoint"
          value={filters.endpoint}
          options={[
            ['', 'Every endpoint'] as const,
            ...endpoints.map(
              (endpoint) => [String(endpoint.id), `#${endpoint.id} ${endpoint.description || endpoint.url}`] as const,
            ),
          ]}
          onValue={(endpoint) => setFilters({ ...filters, endpoint })}
        />
        <Select
          label="Status"
          value={filters.status}
          options={STATUS_OPTIONS}
          onValue={(status) => setFilters({ ...filters, status })}
        />
      </div>
      {retry.failure && <Alert>{retry.failure}</Alert>}
      <Rows load={page} items={page.data?.items} what="deliveries" empty="No delivery matches.">
        {(rows) => (
          <DataTable caption="Webhook deliveries" columns={columns} rows={rows} rowKey={(delivery) => delivery.id} />
        )}
      </Rows>
      <Pager label="Deliveries" number={page.number} previous={page.previous} next={page.next} />
    </>
  );
}

/** Webhook endpoints (secret shown once; enable, disable, rotate, delete) and their deliveries (retry). */
export function WebhooksScreen() {
  const { environment, announce } = useConsole();
  const endpoints = useLoad(() => ugs.listWebhookEndpoints({ environment }), [environment]);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [rotatedSecret, setRotatedSecret] = useState<string | null>(null);
  const action = useSubmit();

  const setEnabled = async (endpoint: WebhookEndpoint, enabled: boolean) => {
    if (await action.run(() => ugs.updateWebhookEndpoint(endpoint.id, { enabled }, { environment }))) {
      announce(`Endpoint ${endpoint.id} ${enabled ? 'enabled' : 'disabled'}.`);
      endpoints.reload();
    }
  };
  const confirm = async () => {
    if (!confirming) return;
    const { kind, endpoint } = confirming;
    const done = await action.run(async () =>
      kind === 'rotate'
        ? (await ugs.rotateWebhookSecret(endpoint.id, { environment })).secret
        : (await ugs.deleteWebhookEndpoint(endpoint.id, { environment }), null),
    );
    setConfirming(null);
    if (done === undefined) return;
    if (kind === 'rotate') setRotatedSecret(done);
    else announce(`Endpoint ${endpoint.id} deleted.`);
    endpoints.reload();
  };
  const columns: Array<Column<WebhookEndpoint>> = [
    { header: 'Id', cell: (endpoint) => endpoint.id },
    {
      header: 'URL',
      class: 'break',
      cell: (endpoint) => (
        <>
          <code>{endpoint.url}</code>
          {endpoint.description && <div class="muted">{endpoint.description}</div>}
        </>
      ),
    },
    { header: 'Events', cell: (endpoint) => endpoint.events.join(', ') },
    {
      header: 'State',
      cell: (endpoint) => (endpoint.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="bad">disabled</Badge>),
    },
    { header: 'Created', cell: (endpoint) => <Time at={endpoint.created_at} /> },
    {
      header: 'Actions',
      hiddenHeader: true,
      class: 'actions',
      cell: (endpoint) => (
        <>
          <button type="button" class="secondary small" onClick={() => void setEnabled(endpoint, !endpoint.enabled)}>
            {endpoint.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" class="secondary small" onClick={() => setConfirming({ kind: 'rotate', endpoint })}>
            Rotate secret
          </button>
          <button type="button" class="danger small" onClick={() => setConfirming({ kind: 'delete', endpoint })}>
            Delete
          </button>
        </>
      ),
    },
  ];

  return (
    <>
      <PageHeader title="Webhooks" />
      <Section title={`Create an endpoint in ${environment}`}>
        <CreateEndpoint onCreated={endpoints.reload} />
      </Section>
      <Section title={`Endpoints in ${environment}`}>
        {rotatedSecret && (
          <OnceSecret
            title="The endpoint's new signing secret (the old one keeps signing for 24 hours)"
            secret={rotatedSecret}
            onDone={() => setRotatedSecret(null)}
          />
        )}
        {action.failure && <Alert>{action.failure}</Alert>}
        <Rows
          load={endpoints}
          items={endpoints.data?.items}
          what="webhook endpoints"
          empty={`No endpoint in ${environment}.`}
        >
          {(rows) => (
            <DataTable
              caption={`Webhook endpoints in ${environment}`}
              columns={columns}
              rows={rows}
              rowKey={(endpoint) => endpoint.id}
            />
          )}
        </Rows>
      </Section>
      <Section title="Deliveries">
        <Deliveries endpoints={endpoints.data?.items ?? []} />
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
