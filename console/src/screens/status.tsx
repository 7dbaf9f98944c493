import { api, list } from '../api';
import { Alert, Badge, Loading, PageHeader, Section } from '../components/ui';
import { useConsole, useLoad } from '../hooks';

/** GET of a public operations endpoint: whether it answered 200, and its body. */
async function probe(path: string): Promise<{ ok: boolean; body: unknown }> {
  try {
    const response = await fetch(path, { cache: 'no-store' });
    return { ok: response.ok, body: await response.json().catch(() => null) };
  } catch {
    return { ok: false, body: null };
  }
}

/** Counting groups pages through the list, so it stops here and says "at least". */
const GROUP_PAGE = 1000;
const GROUP_PAGES = 10;

async function countGroups(environment: string): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  let cursor: string | undefined;
  for (let page = 0; page < GROUP_PAGES; page++) {
    const { items, next } = await list('/api/admin/user_groups', 'user_groups', {
      environment,
      limit: GROUP_PAGE,
      cursor,
    });
    count += items.length;
    if (!next) return { count, capped: false };
    cursor = next;
  }
  return { count, capped: true };
}

async function countFailedDeliveries(environment: string): Promise<number> {
  return (
    await list('/api/admin/webhook_deliveries', 'webhook_deliveries', { environment, status: 'failed', limit: 1000 })
  ).items.length;
}

/** The service's health and version, and how much of everything the environment holds. */
export function StatusScreen() {
  const { environment } = useConsole();
  const status = useLoad(async () => {
    const [health, ready, openapi, groups, tokens, schemas, sources, endpoints, failed] = await Promise.all([
      probe('/healthz'),
      probe('/readyz'),
      probe('/openapi.json'),
      countGroups(environment),
      api<{ api_tokens: unknown[] }>('GET', '/api/admin/api_tokens', { query: { environment } }),
      api<{ schemas: unknown[] }>('GET', '/api/admin/schemas'),
      api<{ data_sources: unknown[] }>('GET', '/api/admin/data_sources', { query: { environment } }),
      api<{ webhook_endpoints: unknown[] }>('GET', '/api/admin/webhook_endpoints', { query: { environment } }),
      countFailedDeliveries(environment),
    ]);
    const version = (openapi.body as { info?: { version?: string } } | null)?.info?.version ?? 'unknown';
    return {
      health,
      ready,
      version,
      counts: [
        ['User groups', `${groups.count.toLocaleString()}${groups.capped ? '+' : ''}`],
        ['Live API tokens', tokens.api_tokens.length.toLocaleString()],
        ['Schemas (workspace)', schemas.schemas.length.toLocaleString()],
        ['Data sources', sources.data_sources.length.toLocaleString()],
        ['Webhook endpoints', endpoints.webhook_endpoints.length.toLocaleString()],
        ['Failed webhook deliveries', `${failed.toLocaleString()}${failed === 1000 ? '+' : ''}`],
      ] as const,
    };
  }, [environment]);
  return (
    <>
      <PageHeader title="Status">
        <button type="button" class="secondary" onClick={status.reload}>
          Refresh
        </button>
      </PageHeader>
      {status.error && <Alert>{status.error.message}</Alert>}
      {!status.data && !status.error && <Loading what="the status" />}
      {status.data && (
        <>
          <Section title="Service">
            <dl class="details">
              <dt>Process</dt>
              <dd>
                {status.data.health.ok ? <Badge tone="good">alive</Badge> : <Badge tone="bad">not answering</Badge>}
              </dd>
              <dt>Database</dt>
              <dd>
                {status.data.ready.ok ? <Badge tone="good">reachable</Badge> : <Badge tone="bad">unavailable</Badge>}
              </dd>
              <dt>Version</dt>
              <dd>
                <code>{status.data.version}</code>
              </dd>
            </dl>
          </Section>
          <Section title={`Counts in ${environment}`}>
            <ul class="stats" aria-label={`Counts in ${environment}`}>
              {status.data.counts.map(([label, value]) => (
                <li key={label}>
                  <span class="stat-value">{value}</span>
                  <span class="stat-label">{label}</span>
                </li>
              ))}
            </ul>
          </Section>
        </>
      )}
    </>
  );
}
