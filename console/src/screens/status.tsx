import { Alert, Badge, Loading, PageHeader, Section } from '../components/ui';
import { useConsole, useLoad, type Environment } from '../hooks';
import { ugs } from '../service';

/**
 * GET of a public operations endpoint (no credentials, no envelope: not an API call, so not the
 * client's): whether it answered 200, and its body.
 */
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

async function countGroups(environment: Environment): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  let cursor: string | undefined;
  for (let page = 0; page < GROUP_PAGES; page++) {
    const { items, next_cursor } = await ugs.listUserGroups({ environment, limit: String(GROUP_PAGE), cursor });
    count += items.length;
    if (!next_cursor) return { count, capped: false };
    cursor = next_cursor;
  }
  return { count, capped: true };
}

async function countFailedDeliveries(environment: Environment): Promise<number> {
  return (await ugs.listWebhookDeliveries({ environment, status: 'failed', limit: '1000' })).items.length;
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
      ugs.listApiTokens({ environment }),
      ugs.listSchemas(),
      ugs.listDataSources({ environment }),
      ugs.listWebhookEndpoints({ environment }),
      countFailedDeliveries(environment),
    ]);
    const version = (openapi.body as { info?: { version?: string } } | null)?.info?.version ?? 'unknown';
    return {
      health,
      ready,
      version,
      counts: [
        ['User groups', `${groups.count.toLocaleString()}${groups.capped ? '+' : ''}`],
        ['Live API tokens', tokens.items.length.toLocaleString()],
        ['Schemas (workspace)', schemas.items.length.toLocaleString()],
        ['Data sources', sources.items.length.toLocaleString()],
        ['Webhook endpoints', endpoints.items.length.toLocaleString()],
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
