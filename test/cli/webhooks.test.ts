// `ugs webhooks …` against a real SQLite file (docs/api.md#webhooks): the admin API's endpoints and deliveries,
// the secret shown once, a CLI change announced like an API one, and the SSRF rule and its escape.
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { cleanUp, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterEach(cleanUp);

interface EndpointRow {
  id: number;
  url: string;
  events: string | string[];
  environment: string;
  enabled: boolean;
  description: string;
  secret?: string;
}

describe('ugs webhooks', () => {
  it('creates (secret shown once), lists, updates, rotates and deletes an endpoint, each audited', async () => {
    const box = sandbox();
    const created = await box.ugs(
      'webhooks',
      'create',
      '--url',
      'http://127.0.0.1:9/hooks',
      '--events',
      'user_group.created,user_group.deleted',
      '--description',
      'CRM',
      '--webhook-allow-private',
    );
    expect(created.code, created.stderr).toBe(0);
    const [, id, secret] =
      /^webhook endpoint (\d+) \(http:\/\/127\.0\.0\.1:9\/hooks\)\nsigning secret, shown only this once: (whsec_\S+)\n$/.exec(
        created.stdout,
      ) ?? [];
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const listed = jsonOutput<EndpointRow[]>(await box.ugs('webhooks', 'list', '--json'));
    expect(listed).toEqual([
      {
        id: Number(id),
        url: 'http://127.0.0.1:9/hooks',
        events: 'user_group.created,user_group.deleted',
        environment: 'Customer',
        enabled: true,
        description: 'CRM',
        created_at: expect.any(String),
      },
    ]);
    expect((await box.ugs('webhooks', 'list')).stdout).not.toContain('whsec_');

    const disabled = jsonOutput<EndpointRow>(
      await box.ugs('webhooks', 'update', id!, '--disable', '--events', '*', '--json'),
    );
    expect(disabled).toMatchObject({ enabled: false, events: '*' });
    const rotated = jsonOutput<EndpointRow>(await box.ugs('webhooks', 'rotate-secret', id!, '--json'));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(await box.ugs('webhooks', 'delete', id!)).toMatchObject({
      code: 0,
      stdout: `deleted webhook endpoint ${id} (http://127.0.0.1:9/hooks)\n`,
    });
    expect(await box.ugs('webhooks', 'list')).toMatchObject({ code: 0, stdout: '(none)\n' });

    const audit = jsonOutput<Array<{ action: string; actor: string; changes: Record<string, unknown> }>>(
      await box.ugs('audit', 'list', '--json'),
    );
    const actions = audit.filter((event) => event.action.startsWith('webhook_endpoint.')).map((event) => event.action);
    expect(actions.sort()).toEqual([
      'webhook_endpoint.created',
      'webhook_endpoint.deleted',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.updated',
    ]);
    expect(JSON.stringify(audit)).not.toContain('whsec_');
  });

  it('queues the events of CLI changes, shows their deliveries and retries one by hand', async () => {
    const box = sandbox();
    const receiver = await startWebhookReceiver();
    try {
      const endpoint = jsonOutput<EndpointRow>(
        await box.ugs('webhooks', 'create', '--url', receiver.url, '--webhook-allow-private', '--json'),
      );
      expect((await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'read')).code).toBe(0);
      const lines = ['a', 'b', 'c']
        .map((id) => JSON.stringify({ provided_id: `imported-${id}`, name: id, api_environment_tag: 'Customer' }))
        .join('\n');
      expect(jsonOutput(await box.ugsWithStdin(lines, 'groups', 'import', '-', '--json'))).toMatchObject({
        created: 3,
      });
      // No server runs: the events wait in the outbox, one per change, newest first.
      const pending = jsonOutput<Array<{ id: number; event_type: string; status: string }>>(
        await box.ugs('webhooks', 'deliveries', '--endpoint', String(endpoint.id), '--json'),
      );
      expect(pending.map((delivery) => [delivery.event_type, delivery.status])).toEqual([
        ['user_group.created', 'pending'],
        ['user_group.created', 'pending'],
        ['user_group.created', 'pending'],
        ['api_token.created', 'pending'],
      ]);
      expect(await box.ugs('webhooks', 'retry', String(pending[3]!.id))).toMatchObject({
        code: 0,
        stdout: `delivery ${pending[3]!.id} (api_token.created) queued again\n`,
      });
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a private address unless allowed, and a bad allow-private setting', async () => {
    const box = sandbox();
    expectCleanFailure(
      await box.ugs('webhooks', 'create', '--url', 'http://127.0.0.1:9/hooks'),
      /url is refused: the destination is not allowed or cannot be resolved: webhooks reach only public \(global unicast\) addresses/,
    );
    expectCleanFailure(
      await box.ugsWith(
        { UGS_WEBHOOK_ALLOW_PRIVATE: 'yes' },
        'webhooks',
        'create',
        '--url',
        'http://127.0.0.1:9/hooks',
      ),
      /UGS_WEBHOOK_ALLOW_PRIVATE must be true or false/,
    );
    expect(
      (
        await box.ugsWith(
          { UGS_WEBHOOK_ALLOW_PRIVATE: 'true' },
          'webhooks',
          'create',
          '--url',
          'http://127.0.0.1:9/hooks',
        )
      ).code,
    ).toBe(0);
    expectCleanFailure(await box.ugs('webhooks', 'update', '1'), /Give at least one of/);
    expectCleanFailure(await box.ugs('webhooks', 'delete', '99'), /No webhook endpoint with id 99/);
    expectCleanFailure(
      await box.ugs(
        'webhooks',
        'create',
        '--url',
        'http://127.0.0.1:9/hooks',
        '--events',
        'user_group.renamed',
        '--webhook-allow-private',
      ),
      /Unknown event type/,
    );
  });
});
