/*
 * Shared by the secrets-at-rest suites of both engines (secrets-at-rest.sqlite.test.ts reads the
 * SQLite files, secrets-at-rest.postgres.test.ts a pg_dump): the secrets a run makes, the byte
 * search for them, and what a database opened with the wrong key may answer.
 */
import { expect } from 'vitest';
import { MissingEncryptionKeysError } from '../../src/domain/encryption-keys/key-rotation.service.js';
import { encryptionKeyId, hashSecret } from '../../src/domain/secrets.js';
import { openDatabaseReader } from '../support/database-reader.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { tenantOf } from './helpers.js';
import { expectError } from '../support/error-envelope.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { makeGroup } from '../support/group-maker.js';

export interface Secrets {
  /** Every user group token handed out: current ones and those rotated away or deleted. */
  userGroupTokens: string[];
  /** Every API token secret: the test app's, an extra one and a revoked one. */
  apiTokens: string[];
  /** The groups still there, with their current token. */
  live: Array<{ id: string; token: string }>;
  /** The private parts (`d`, base64url) of the workspace's embed-token signing keys: the first and, after a rotation, the current one. */
  signingKeys: string[];
  /** Embed tokens minted under each of those keys (never stored anywhere). */
  embedTokens: string[];
  /** The signing secrets of a webhook endpoint: the first and, after a rotation, the current one. */
  webhookSecrets: string[];
}

/**
 * Makes secrets of every kind: 12 groups, a third rotated twice and a third once, one deleted; API
 * tokens of the Testing environment, one of them revoked. Every rotation carries an Idempotency-Key,
 * so its response, new token and all, is kept in the database for replays.
 */
export async function makeSecrets(t: TestApp): Promise<Secrets> {
  const secrets: Secrets = {
    userGroupTokens: [],
    apiTokens: [],
    live: [],
    signingKeys: [],
    embedTokens: [],
    webhookSecrets: [],
  };
  const call = (req: ApiRequest) => inject(t.app, req);
  const write = t.tokens.default.Customer.write;
  await makeWebhookSecrets(t, secrets);
  for (let i = 0; i < 12; i += 1) {
    const group = await makeGroup({ target: call, token: write }, { id: `secret-${i}`, properties: { n: i } });
    secrets.userGroupTokens.push(group.token);
    let token = group.token;
    // Rotate a third of them twice and a third once: the rotated-away tokens must not linger either.
    for (let r = 0; r < i % 3; r += 1) {
      const rotation = {
        method: 'POST',
        path: '/api/user',
        token: write,
        body: { current_token: token },
        headers: { 'idempotency-key': `rotate-${i}-${r}` },
      };
      const rotated = await call(rotation);
      expect(rotated.status).toBe(200);
      // Control: the kept response is there to replay, with the new token in it.
      expect((await call(rotation)).raw).toBe(rotated.raw);
      token = rotated.body.user_group.token as string;
      secrets.userGroupTokens.push(token);
    }
    secrets.live.push({ id: group.provided_id, token });
  }
  await expectKeptResponses(t, secrets.userGroupTokens.length - 12);
  const deleted = await call({
    method: 'DELETE',
    path: '/api/user',
    token: write,
    body: { user_group_id: 'secret-0' },
  });
  expect(deleted.status).toBe(200);
  secrets.live.shift();

  secrets.apiTokens.push(
    ...Object.values(t.tokens).flatMap((set) => Object.values(set).flatMap((scopes) => Object.values(scopes))),
  );
  const tenant = await tenantOf(t, 'default', 'Testing');
  secrets.apiTokens.push(
    (await issueApiToken(t, { as: { environment: 'Testing' }, scope: 'write', name: 'at-rest' })).secret,
  );
  const revoked = (await issueApiToken(t, { as: { environment: 'Testing' }, scope: 'read', name: 'to revoke' })).secret;
  secrets.apiTokens.push(revoked);
  const [record] = (await t.runtime.store.listApiTokens(tenant.workspaceId)).filter(
    (token) => token.name === 'to revoke',
  );
  await t.runtime.services.apiTokens.revokeApiToken(
    { tenant, scope: 'admin', actor: { type: 'cli' }, requestId: null },
    record!.id,
  );
  await makeSigningKeys(t, secrets);
  return secrets;
}

/**
 * A webhook endpoint wanting every event, its secret rotated once: every change after it writes an
 * event (the group as the API shows it) into the outbox, which the token searches then cover too.
 * A literal public address: no DNS involved, and nothing is delivered (no worker runs).
 */
async function makeWebhookSecrets(t: TestApp, secrets: Secrets): Promise<void> {
  const admin = t.tokens.default.Customer.admin;
  const created = await inject(t.app, {
    method: 'POST',
    path: '/api/admin/webhook_endpoints',
    token: admin,
    body: { url: 'https://93.184.216.34/hooks', events: ['*'] },
  });
  expect(created.status, created.raw).toBe(200);
  const rotated = await inject(t.app, {
    method: 'POST',
    path: `/api/admin/webhook_endpoints/${created.body.webhook_endpoint.id}/rotate_secret`,
    token: admin,
  });
  expect(rotated.status, rotated.raw).toBe(200);
  secrets.webhookSecrets.push(
    created.body.webhook_endpoint.secret as string,
    rotated.body.webhook_endpoint.secret as string,
  );
}

/** Webhook secrets found in any of the blobs: as text, their base64 part, or the key bytes it encodes. */
export function webhookSecretLeaks(blobs: Map<string, Buffer>, webhookSecrets: string[]): string[] {
  return [...blobs].flatMap(([where, bytes]) =>
    webhookSecrets
      .filter((secret) => {
        const base64 = secret.slice('whsec_'.length);
        return bytes.includes(Buffer.from(base64, 'utf8')) || bytes.includes(Buffer.from(base64, 'base64'));
      })
      .map((secret) => `webhook secret ${secret.slice(0, 10)}… in ${where}`),
  );
}

/** Two signing keys (the first made on first need, the second by rotation), an embed token under each. */
async function makeSigningKeys(t: TestApp, secrets: Secrets): Promise<void> {
  const call = (req: ApiRequest) => inject(t.app, req);
  const mint = async () => {
    const minted = await call({
      method: 'POST',
      path: '/api/user/embed_token',
      token: t.tokens.default.Customer.read,
      body: { user_group_id: secrets.live[0]!.id },
    });
    expect(minted.status).toBe(200);
    secrets.embedTokens.push(minted.body.embed_token as string);
  };
  await mint();
  expect(
    (await call({ method: 'POST', path: '/api/admin/signing_keys/rotate', token: t.tokens.default.Customer.admin }))
      .status,
  ).toBe(200);
  await mint();
  const keys = await t.runtime.store.listSigningKeys(
    { workspaceId: t.runtime.defaultWorkspace.id, environment: 'Customer' },
    new Date(0).toISOString(),
  );
  expect(keys).toHaveLength(2);
  for (const key of keys)
    secrets.signingKeys.push((JSON.parse(t.runtime.keys.keyring.decrypt(key.privateKeyCiphertext)) as { d: string }).d);
}

/** Signing keys (`d`, base64url) found in any of the blobs, as text or as raw bytes; empty when none leaked. */
export function privateKeyLeaks(blobs: Map<string, Buffer>, privateKeys: string[]): string[] {
  return [...blobs].flatMap(([where, bytes]) =>
    privateKeys
      .filter((d) => bytes.includes(Buffer.from(d, 'utf8')) || bytes.includes(Buffer.from(d, 'base64url')))
      .map((d) => `signing key ${d.slice(0, 6)}… in ${where}`),
  );
}

/** Embed tokens found in any of the blobs (whole, or their signature part); empty when none leaked. */
export function embedTokenLeaks(blobs: Map<string, Buffer>, tokens: string[]): string[] {
  return [...blobs].flatMap(([where, bytes]) =>
    tokens
      .filter((token) => bytes.includes(Buffer.from(token.split('.')[2]!, 'utf8')))
      .map(() => `an embed token in ${where}`),
  );
}

/**
 * Control: the responses of the keyed rotations are in the database. On a reader of its own, closed
 * at once: an open one would keep SQLite from checkpointing its WAL into the file when the app closes.
 */
async function expectKeptResponses(t: TestApp, count: number): Promise<void> {
  const reader = await openDatabaseReader(t.db);
  try {
    expect(await reader.count('idempotency_keys WHERE response IS NOT NULL')).toBe(count);
  } finally {
    await reader.close();
  }
}

/** The forms a secret could take if written in the clear: itself, its 64-hex body, the raw bytes of that body. */
function plaintextForms(secret: string): Buffer[] {
  const body = /[0-9a-f]{64}$/.exec(secret)?.[0];
  if (!body) throw new Error(`not a token: ${secret}`);
  return [Buffer.from(secret, 'utf8'), Buffer.from(body, 'utf8'), Buffer.from(body, 'hex')];
}

/** Secrets found in any of the named byte blobs (files, dumps), with where: empty when nothing leaked. */
export function leaks(blobs: Map<string, Buffer>, secrets: string[]): string[] {
  const found: string[] = [];
  for (const [where, bytes] of blobs) {
    for (const secret of secrets) {
      if (plaintextForms(secret).some((form) => bytes.includes(form))) found.push(`${secret} in ${where}`);
    }
  }
  return found;
}

/** Positive control: the lookup hash of every secret is stored, so the byte search does see the data. */
export function expectHashesStored(blobs: Map<string, Buffer>, secrets: string[]): void {
  const all = Buffer.concat([...blobs.values()]);
  const missing = secrets.filter((secret) => !all.includes(Buffer.from(hashSecret(secret), 'utf8')));
  expect(missing).toEqual([]);
}

/** The key, as text and as bytes, is nowhere in the blobs. */
export function expectKeyAbsent(blobs: Map<string, Buffer>, base64Key: string): void {
  const all = Buffer.concat([...blobs.values()]);
  expect(all.includes(Buffer.from(base64Key, 'utf8'))).toBe(false);
  expect(all.includes(Buffer.from(base64Key, 'base64'))).toBe(false);
}

/** Asks an app on the stored data for an existing group, by get-or-create and by update. */
export async function askForGroup(
  app: TestApp,
  group: { id: string },
): Promise<{ getOrCreate: ApiResponse; update: ApiResponse }> {
  const token = app.tokens.default.Customer.write;
  const getOrCreate = await inject(app.app, {
    method: 'GET',
    path: '/api/user',
    token,
    body: { user_group_id: group.id },
  });
  const update = await inject(app.app, {
    method: 'PUT',
    path: '/api/user',
    token,
    body: { user_group_id: group.id, name: 'changed' },
  });
  return { getOrCreate, update };
}

/**
 * An app holding the wrong key produced no token and said nothing of why: a bare 500 internal_error,
 * no word of decryption, keys or code, no key id, no stack, no token.
 */
export function expectNoTokenAndNoInternals(response: ApiResponse, keys: Buffer[], group: { token: string }): void {
  expectError(response, 500, 'internal_error');
  expect(Object.keys(response.body.error).sort()).toEqual(['code', 'message', 'request_id']);
  const { message } = response.body.error as { message: string };
  expect(message).not.toMatch(/decrypt|cipher|key|aes|gcm|auth tag|\bat\s|\.ts\b|\.js\b|\//i);
  for (const internal of [...keys.map(encryptionKeyId), 'stack', 'Error', group.token]) {
    expect(response.raw).not.toContain(internal);
  }
  expect(response.raw).not.toMatch(/ugt_[0-9a-f]{64}/);
}

/**
 * An instance opened with a key the data was not written with refuses to start (docs/deployment.md#one-machine-sqlite): the error
 * names key ids, never a key or a token.
 */
export async function expectRefusedStart(opening: Promise<unknown>, secrets: string[]): Promise<void> {
  const refused = await opening.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(MissingEncryptionKeysError);
  for (const secret of secrets) expect((refused as Error).message).not.toContain(secret);
}
