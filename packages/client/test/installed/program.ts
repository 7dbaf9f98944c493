// A program of a project outside the repository that installed @ugs/client from its tarball alone:
// every method group, type-checked strictly (no cast of an answer) and run against a live server by
// test/package.test.ts. It prints what it saw as one JSON line.
import {
  accessRulesToSql,
  AccessRuleError,
  createClient,
  createEmbedTokenVerifier,
  UgsError,
  verifyWebhook,
  WebhookVerificationError,
  type Page,
  type ResolvedAccessRule,
  type UgsClient,
  type UserGroup,
  type WebhookEvent,
} from '@ugs/client';

declare const process: { argv: string[] };
const [baseUrl = '', adminToken = ''] = process.argv.slice(2);
const ugs: UgsClient = createClient({ baseUrl, apiToken: adminToken });

// User groups, verify, embed tokens.
const schema = await ugs.createSchema({ name: 'packed-schema' });
const dataSource = await ugs.createDataSource({ provided_id: 'packed-ds', name: 'Packed', schema_id: schema.id });
const created = await ugs.getOrCreateUserGroup({
  user_group_id: 'packed-1',
  name: 'Packed',
  mapping: { [schema.id]: 'packed-ds' },
  properties: { plan: 'pro' },
  tags: ['packed'],
});
const updated: UserGroup = await ugs.updateUserGroup({ user_group_id: 'packed-1', properties: { plan: 'team' } });
const rotated = await ugs.rotateUserGroupToken(created.userGroup.token);
const verified = await ugs.verifyToken(rotated.token);
const minted = await ugs.mintEmbedToken({ user_group_id: 'packed-1', embed_id: 'board', expires_in: 600 });
const claims = await createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default`, audience: 'board' })(
  minted.embed_token,
);
const embedded = await ugs.verifyToken(minted.embed_token);
// The token's access rules as a renderer's SQL filter (none here: the table fails closed).
const rules: ResolvedAccessRule[] = claims.ugs.access_rules ?? [];
const denied = accessRulesToSql(rules, { dialect: 'sqlite', table: 'orders', schemaId: schema.id });
const filter = accessRulesToSql(
  [{ schema_id: schema.id, table: 'sales.orders', column: 'region', op: 'in', value: ['eu', 'us'] }],
  { dialect: 'postgres', table: 'sales.orders', schemaId: schema.id },
);
const badColumn = (() => {
  try {
    return accessRulesToSql([{ schema_id: 1, table: 'orders', column: 'a;b', op: 'is_null' }], {
      dialect: 'mysql',
      table: 'orders',
      schemaId: 1,
    });
  } catch (error) {
    return error instanceof AccessRuleError ? error.field : 'other error';
  }
})();

// Admin: schemas, data sources, the groups list, API tokens, audit, signing keys.
const schemas: Page<{ id: number; name: string }> = await ugs.listSchemas();
const dataSources = await ugs.listDataSources({ environment: 'Customer' });
const renamed = await ugs.updateDataSource(dataSource.id, { name: 'Packed again' });
const fetchedSource = await ugs.getDataSource(dataSource.id);
const groups = await ugs.listUserGroups({ q: 'packed-', limit: '10' });
const group = await ugs.getUserGroup(groups.items[0]?.team_id ?? 0);
const issued = await ugs.createApiToken({ name: 'packed-token', scope: 'read' });
const limited = await ugs.updateApiToken(issued.id, { rate_limit: { per_second: 5, burst: 10 } });
const tokens = await ugs.listApiTokens();
await ugs.revokeApiToken(issued.id);
const audit = await ugs.listAuditEvents({ action: 'api_token.revoked', limit: '5' });
const rotation = await ugs.rotateSigningKey();
const keys = await ugs.listSigningKeys();

// Webhooks, and a delivery signed as the service signs one, checked by verifyWebhook.
const endpoint = await ugs.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hooks', events: ['user_group.deleted'] });
const endpoints = await ugs.listWebhookEndpoints();
const disabled = await ugs.updateWebhookEndpoint(endpoint.id, { enabled: false });
const fetchedEndpoint = await ugs.getWebhookEndpoint(endpoint.id);
const newSecret = await ugs.rotateWebhookSecret(endpoint.id);
const deliveries = await ugs.listWebhookDeliveries({ endpoint_id: String(endpoint.id) });
const body = JSON.stringify({ id: 'evt_1', type: 'user_group.deleted', data: {} });
const timestamp = String(Math.floor(Date.now() / 1000));
const key = Uint8Array.from(atob(newSecret.secret.slice('whsec_'.length)), (character) => character.charCodeAt(0));
const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
const mac = new Uint8Array(
  await crypto.subtle.sign('HMAC', hmac, new TextEncoder().encode(`msg_1.${timestamp}.${body}`)),
);
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': timestamp };
const event: WebhookEvent = await verifyWebhook(
  { ...headers, 'webhook-signature': `v1,${btoa(String.fromCharCode(...mac))}` },
  body,
  newSecret.secret,
);
const forged = await verifyWebhook(
  { ...headers, 'webhook-signature': `v1,${btoa('x'.repeat(32))}` },
  body,
  newSecret.secret,
)
  .then(() => 'accepted')
  .catch((error: unknown) => (error instanceof WebhookVerificationError ? 'refused' : 'other error'));
await ugs.deleteWebhookEndpoint(endpoint.id);

// One error class; then the group goes.
await ugs.deleteUserGroup({ user_group_id: 'packed-1' });
const missing = await ugs.getUserGroup(group.team_id).catch((error: unknown) => error);
await ugs.deleteDataSource(dataSource.id);

// eslint-disable-next-line no-console -- the program's output, which the test reads
console.log(
  JSON.stringify({
    newUserGroup: created.newUserGroup,
    mappingResolved: created.userGroup.mapping[String(schema.id)] === String(dataSource.id),
    updated: updated.properties,
    verifiedTeam: verified.user_group.team_id === created.userGroup.team_id,
    embedSubject: claims.sub,
    embedOnline: embedded.embed?.embed_id,
    accessFilter: [denied.text, filter.text, filter.values, badColumn],
    schemaListed: schemas.items.some((item) => item.id === schema.id) && schemas.next_cursor === null,
    dataSourceListed: dataSources.items.some((item) => item.id === dataSource.id),
    renamed: renamed.name === fetchedSource.name,
    group: group.provided_id,
    tokenLimit: limited.rate_limit,
    tokenListed: tokens.items.some((token) => token.id === issued.id),
    audited: audit.items[0]?.action,
    currentKey: keys.items.some((item) => item.kid === rotation.current.kid),
    endpointListed: endpoints.items.some((item) => item.id === endpoint.id),
    disabled: !disabled.enabled && !fetchedEndpoint.enabled,
    deliveries: deliveries.items.length,
    webhookEvent: event.type,
    forged,
    missing: missing instanceof UgsError ? [missing.status, missing.code] : 'not a UgsError',
  }),
);
