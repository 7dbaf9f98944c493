import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, type ApiRequest } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** Every byte the service logs, at the most talkative level. */
class LogCapture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('log hygiene', () => {
  const logs = new LogCapture();
  let t: TestApp;
  let baseUrl: string;
  let receiver: WebhookReceiver;
  /** Every credential the run handles: none may appear in the logs. */
  const secrets = new Set<string>();

  const call = async (req: ApiRequest) => {
    const response = await send(baseUrl, req);
    for (const token of response.raw.match(/ug[st]_[a-z_]*[0-9a-f]{64}|whsec_[A-Za-z0-9+/=]{44}/g) ?? [])
      secrets.add(token);
    return response;
  };

  beforeAll(async () => {
    // Webhooks too: their worker logs each attempt, and must not log the secret, the URL (the
    // receiver's own key rides in its query) or the payload.
    t = await createTestApp({
      log: { level: 'trace', destination: logs },
      webhooks: { allowPrivate: true, worker: { pollIntervalMs: 20 } },
    });
    baseUrl = await t.listen();
    receiver = await startWebhookReceiver();
    for (const set of Object.values(t.tokens))
      for (const scopes of Object.values(set)) for (const token of Object.values(scopes)) secrets.add(token);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('logs requests and webhook attempts, including failed ones, but never a token, a secret or an Authorization header', async () => {
    const admin = t.tokens.default.Customer.admin;
    const endpoint = await call({
      method: 'POST',
      path: '/api/admin/webhook_endpoints',
      token: admin,
      body: { url: `${receiver.url}?key=receiver-key-4711`, events: ['*'] },
    });
    await call({
      method: 'POST',
      path: `/api/admin/webhook_endpoints/${endpoint.body.webhook_endpoint.id}/rotate_secret`,
      token: admin,
    });
    const schema = (await call({ method: 'POST', path: '/api/admin/schemas', token: admin, body: { name: 'sales' } }))
      .body.schema;
    await call({
      method: 'POST',
      path: '/api/admin/data_sources',
      token: admin,
      body: { provided_id: 'ds', name: 'DS', schema_id: schema.id },
    });
    const created = await call({
      method: 'GET',
      path: '/api/user',
      token: admin,
      body: { user_group_id: 'g1', mapping: { [schema.id]: 'ds' } },
    });
    const token: string = created.body.user_group.token;
    await call({ method: 'GET', path: '/api/user?user_group_id=g2&properties=%7B%22a%22%3A1%7D', token: admin });
    await call({ method: 'PUT', path: '/api/user', token: admin, body: { user_group_id: 'g1', name: 'renamed' } });
    await call({ method: 'POST', path: '/api/user/verify', token: admin, body: { token } });
    const rotated: string = (
      await call({ method: 'POST', path: '/api/user', token: admin, body: { current_token: token } })
    ).body.user_group.token;
    await call({ method: 'POST', path: '/api/user', token: admin, body: { current_token: token } }); // 404: already rotated
    await call({
      method: 'DELETE',
      path: '/api/user',
      token: admin,
      body: { current_token: rotated, user_group_id: 'g1' },
    });
    const issued = await call({
      method: 'POST',
      path: '/api/admin/api_tokens',
      token: admin,
      body: { name: 'temp', scope: 'read' },
    });
    await call({ method: 'DELETE', path: `/api/admin/api_tokens/${issued.body.api_token.id}`, token: admin });
    await call({ method: 'GET', path: '/api/user', token: issued.body.api_token.token, body: { user_group_id: 'g3' } }); // 401: revoked
    await call({
      method: 'GET',
      path: '/api/user',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
      body: { user_group_id: 'g3' },
    });
    await call({ method: 'GET', path: '/api/user?current_token=ugt_' + 'a'.repeat(64), token: admin }); // a credential in a URL
    await call({ method: 'GET', path: '/api/user', token: admin, rawBody: '{"user_group_id": ' }); // 400 invalid_json
    await call({ method: 'GET', path: '/api/admin/user_groups', token: admin });
    await call({ method: 'GET', path: '/api/admin/audit_events', token: admin });
    // Embed tokens and the keys that sign them: minted, verified, refused, rotated.
    await call({ method: 'GET', path: '/api/user', token: admin, body: { user_group_id: 'g4' } });
    const embedTokens: string[] = [];
    for (let round = 0; round < 2; round += 1) {
      const minted = await call({
        method: 'POST',
        path: '/api/user/embed_token',
        token: admin,
        body: { user_group_id: 'g4', embed_id: 'd', properties: { a: 1 } },
      });
      embedTokens.push(minted.body.embed_token as string);
      await call({ method: 'POST', path: '/api/user/verify', token: admin, body: { token: minted.body.embed_token } });
      await call({ method: 'POST', path: '/api/admin/signing_keys/rotate', token: admin });
    }
    await call({
      method: 'POST',
      path: '/api/user/verify',
      token: admin,
      body: { token: `${embedTokens[0]!.slice(0, -4)}AAAA` },
    }); // 404: tampered
    await call({ method: 'GET', path: '/w/default/.well-known/jwks.json' });

    await receiver.waitFor((received) => received.some((entry) => entry.json.type === 'signing_key.rotated'));
    await new Promise((resolve) => setTimeout(resolve, 100));

    // The capture really holds the request log and the webhook attempts, so an absence below means something.
    expect(logs.text).toContain('"msg":"webhook attempt"');
    expect(logs.text).not.toContain('receiver-key-4711');
    expect(logs.text).not.toContain('"user_group":');
    expect([...secrets].filter((secret) => secret.startsWith('whsec_'))).toHaveLength(2);
    expect(logs.text).toContain('"path":"/api/user"');
    expect(logs.text).toContain('request completed');
    expect(logs.text).toContain('"code":"invalid_api_token"');
    // 12 fixture API tokens, the group tokens of g1 (before and after rotation) and g2, and the issued API token.
    expect(secrets.size).toBeGreaterThanOrEqual(16);
    for (const secret of secrets) {
      expect(logs.text, `a secret leaked into the logs: ${secret.slice(0, 12)}…`).not.toContain(secret);
      expect(logs.text).not.toContain(secret.slice(-43));
    }
    for (const embedToken of embedTokens) expect(logs.text).not.toContain(embedToken.split('.')[2]!);
    const signingKeys = await t.runtime.store.listSigningKeys(
      { workspaceId: t.runtime.defaultWorkspace.id, environment: 'Customer' },
      new Date(0).toISOString(),
    );
    expect(signingKeys).toHaveLength(3);
    for (const key of signingKeys) {
      const { d } = JSON.parse(t.runtime.keys.keyring.decrypt(key.privateKeyCiphertext)) as { d: string };
      expect(logs.text, 'a private signing key leaked into the logs').not.toContain(d);
    }
    expect(logs.text).not.toContain('ugt_' + 'a'.repeat(64));
    expect(logs.text).not.toMatch(/authorization/i);
    expect(logs.text).not.toContain('dXNlcjpwYXNz');
  });
});
