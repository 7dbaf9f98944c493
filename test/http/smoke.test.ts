import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { inject, send } from '../support/http-client.js';

describe('smoke', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp();
    base = await t.listen();
  });
  afterAll(() => t.close());

  it('creates over a socket with a GET body', async () => {
    const r = await send(base, {
      method: 'GET',
      path: '/api/user',
      token: t.tokens.default.Customer.write,
      body: { user_group_id: 'a' },
    });
    expect(r.status).toBe(200);
    expect(r.body.new_user_group).toBe(true);
    const again = await inject(t.app, {
      method: 'GET',
      path: '/api/user',
      token: t.tokens.default.Customer.read,
      body: { user_group_id: 'a' },
    });
    expect(again.body.user_group.token).toBe(r.body.user_group.token);
  });
});
