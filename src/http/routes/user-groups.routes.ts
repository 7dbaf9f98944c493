import { requestFailure } from '../../wire/request-errors.js';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { echoable } from '../../domain/echoed-text.rules.js';
import { MAX_PROPERTIES_DEPTH } from '../../wire/contract.constants.js';
import { jsonDefectError, parseStrictJson } from '../../wire/strict-json.js';
import type { JsonObject } from '../../domain/common.records.js';
import type { UserGroupService } from '../../domain/user-groups/user-groups.service.js';
import { isEmbedTokenShaped, type EmbedTokenService } from '../../domain/embed-tokens/embed-tokens.service.js';
import type { EmbedTokenLifecycleService } from '../../domain/embed-tokens/embed-token-introspection.service.js';
import { idempotencyKeyOf } from './embed-token-introspection.routes.js';
import { EmbedTokenResponse, MintEmbedTokenBody, VerifiedTokenResponse } from '../../wire/embed-tokens.schemas.js';
import type { UserGroupView } from '../../domain/user-groups/user-group.view.js';
import { presentUserGroup } from '../../wire/user-group.presenter.js';
import { serializeEmbedTokenAnswer } from '../../wire/embed-token.presenter.js';
import type { TSchema } from 'typebox';
import { apiRouteSchema } from '../route-schema.js';
import {
  DeleteUserGroupBody,
  DeleteUserGroupResponse,
  GetOrCreateUserGroupBody,
  GetOrCreateUserGroupResponse,
  RotateUserGroupTokenBody,
  UpdateUserGroupBody,
  UserGroupResponse,
  VerifyUserGroupTokenBody,
} from '../../wire/user-groups.schemas.js';

const routeSchema = <B extends TSchema, R extends TSchema>(
  operationId: string,
  summary: string,
  description: string,
  body: B,
  success: R,
) => apiRouteSchema('user groups', summary, success, { operationId, description, body });

const withUserGroup = (view: UserGroupView) => ({ success: 1 as const, user_group: presentUserGroup(view) });

// Query values that carry JSON documents (or a JSON boolean) rather than plain strings.
export const JSON_QUERY_FIELDS = new Set(['mapping', 'properties', 'tags', 'is_demo_group', 'access_rules']);

/** The tree, demo and tag fields of a get-or-create or PUT body, as the domain takes them. */
const treeFieldsOf = (body: {
  parent_user_group_id?: string | number | null;
  is_demo_group?: boolean;
  tags?: string[];
  access_rules?: unknown;
}) => ({
  parentUserGroupId: body.parent_user_group_id,
  isDemoGroup: body.is_demo_group,
  tags: body.tags,
  accessRules: body.access_rules,
});

/**
 * For clients that cannot send a GET body (fetch, browsers): the same fields from the query string,
 * with mapping and properties as JSON text, held to the same rules as in a body (docs/api.md#wire-conventions).
 * Validation then runs on the result as on any body.
 */
function bodyFromQuery(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(query).map(([field, value]) => {
      if (typeof value !== 'string') {
        throw requestFailure.queryRepeated(echoable(field));
      }
      return [field, JSON_QUERY_FIELDS.has(field) ? jsonFromQuery(field, value) : value];
    }),
  );
}

function jsonFromQuery(field: string, text: string): unknown {
  const parsed = parseStrictJson(text, MAX_PROPERTIES_DEPTH);
  if (parsed.ok) return parsed.value;
  throw jsonDefectError(parsed.defect, { field });
}

/**
 * The hosted product documents these operations under paths of their own (a POST for the
 * update, as it does); they are aliases, with the same bodies and answers, deprecated in the
 * OpenAPI document but for get-or-create's (see aliasing). The canonical route of each operation
 * comes first; each has an operationId of its own (an id names one operation), the alias's after
 * the hosted product's name for it.
 */
const PATHS = {
  getOrCreate: [
    ['GET', '/user', 'getOrCreateUserGroup'],
    ['POST', '/create_user_group', 'hostedCreateUserGroup'],
  ],
  update: [
    ['PUT', '/user', 'updateUserGroup'],
    ['POST', '/update_user_group', 'hostedUpdateUserGroup'],
  ],
  rotate: [
    ['POST', '/user', 'rotateUserGroupToken'],
    ['POST', '/refresh_user_group_token', 'hostedRefreshUserGroupToken'],
  ],
  remove: [
    ['DELETE', '/user', 'deleteUserGroup'],
    ['DELETE', '/delete_user_group', 'hostedDeleteUserGroup'],
  ],
} as const;

/**
 * Get-or-create with its fields in a JSON body, with their JSON types: what a generated client (fetch,
 * axios: no GET body) calls, so this alias is documented for new code rather than deprecated.
 */
const GET_OR_CREATE_WITH_BODY = {
  operationId: 'hostedCreateUserGroup',
  description:
    "Answers the group with this user_group_id; when there is none, creates it from the other fields (creating needs the write scope). The get-or-create of GET /api/user with its fields in a JSON body: the operation for generated clients and for any client that sends no body on a GET. Also the hosted product's path for it, with or without the trailing slash.",
};

/** An alias is the canonical operation under its own operationId, marked deprecated for new code (but the one above). */
const aliasing = <S extends object>(schema: S, index: number, operationId: string) => {
  if (index === 0) return schema;
  if (operationId === GET_OR_CREATE_WITH_BODY.operationId) return { ...schema, ...GET_OR_CREATE_WITH_BODY };
  return { ...schema, operationId, deprecated: true };
};

export const userGroupRoutes: FastifyPluginAsyncTypebox<{
  userGroups: UserGroupService;
  embedTokens: EmbedTokenService;
  embedTokenLifecycle: Pick<EmbedTokenLifecycleService, 'verify'>;
}> = async (app, { userGroups, embedTokens, embedTokenLifecycle }) => {
  const getOrCreateSchema = routeSchema(
    'getOrCreateUserGroup',
    'Get a user group, or create it',
    // Each route of the operation gets its own description (GET /api/user: openapi.ts, the POST alias: above).
    'Answers the group with this user_group_id; when there is none, creates it from the other fields (creating needs the write scope).',
    GetOrCreateUserGroupBody,
    GetOrCreateUserGroupResponse,
  );
  PATHS.getOrCreate.forEach(([method, url, operationId], index) =>
    app.route({
      method,
      url,
      schema: aliasing(getOrCreateSchema, index, operationId),
      // The read confirms the API token in its statement; the POST alias takes an Idempotency-Key, whose
      // claim needs a confirmed token first.
      config: { confirmsApiToken: method === 'GET' },
      preValidation: (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const query = request.query as Record<string, string | string[] | undefined>;
        if (request.body === undefined) request.body = bodyFromQuery(query);
        else if (Object.keys(query).length > 0) throw requestFailure.bodyAndQuery();
        done();
      },
      handler: async (request) => {
        const { body } = request;
        const { userGroup, created } = await userGroups.getOrCreateUserGroup(request.caller, {
          userGroupId: body.user_group_id,
          name: body.name,
          mapping: body.mapping,
          properties: body.properties as JsonObject | null | undefined,
          ...treeFieldsOf(body),
        });
        return { success: 1 as const, new_user_group: created, user_group: presentUserGroup(userGroup) };
      },
    }),
  );

  const updateSchema = routeSchema(
    'updateUserGroup',
    'Update a user group',
    'Absent fields stay as they are; mapping, properties, tags and access_rules are replaced whole (access_rules null or [] clears them); parent_user_group_id null detaches. Never creates.',
    UpdateUserGroupBody,
    UserGroupResponse,
  );
  PATHS.update.forEach(([method, url, operationId], index) =>
    app.route({
      method,
      url,
      schema: aliasing(updateSchema, index, operationId),
      handler: async (request) => {
        const { body } = request;
        const userGroup = await userGroups.updateUserGroup(request.caller, {
          userGroupId: body.user_group_id,
          newUserGroupId: body.new_user_group_id,
          name: body.name,
          mapping: body.mapping,
          properties: body.properties as JsonObject | null | undefined,
          ...treeFieldsOf(body),
        });
        return withUserGroup(userGroup);
      },
    }),
  );

  const rotateSchema = routeSchema(
    'rotateUserGroupToken',
    'Rotate a user group token',
    'The old token stops working at once. An unknown or already rotated token is user_group_not_found.',
    RotateUserGroupTokenBody,
    UserGroupResponse,
  );
  PATHS.rotate.forEach(([method, url, operationId], index) =>
    app.route({
      method,
      url,
      schema: aliasing(rotateSchema, index, operationId),
      handler: async (request) =>
        withUserGroup(await userGroups.rotateUserGroupToken(request.caller, request.body.current_token)),
    }),
  );

  const removeSchema = routeSchema(
    'deleteUserGroup',
    'Delete a user group',
    'Name the group by current_token, user_group_id, or both (then they must agree). With data_source_provided_id, the group must map to that data source. Any failure deletes nothing.',
    DeleteUserGroupBody,
    DeleteUserGroupResponse,
  );
  PATHS.remove.forEach(([method, url, operationId], index) =>
    app.route({
      method,
      url,
      schema: aliasing(removeSchema, index, operationId),
      handler: async (request) => {
        const { body } = request;
        await userGroups.deleteUserGroup(request.caller, {
          currentToken: body.current_token,
          userGroupId: body.user_group_id,
          dataSourceProvidedId: body.data_source_provided_id,
        });
        return { success: 1 as const };
      },
    }),
  );

  app.post(
    '/user/verify',
    {
      schema: routeSchema(
        'verifyUserGroupToken',
        'Resolve a user group token or an embed token',
        'For the dashboard renderer: any scope. A group token: the group holding it in this environment. An embed token: the group it was minted for, with what it was minted for, while its signature, issuer and lifetime hold and the group token has not been rotated since.',
        VerifyUserGroupTokenBody,
        VerifiedTokenResponse,
      ),
      // A POST that changes nothing: it takes no Idempotency-Key (docs/api.md#safe-retries-idempotency-key); its lookup confirms the API token.
      config: { readOnly: true, confirmsApiToken: true },
    },
    async (request) => {
      const { token } = request.body;
      if (!isEmbedTokenShaped(token))
        return withUserGroup(await userGroups.verifyUserGroupToken(request.caller, token));
      // A single-use token is consumed here; Idempotency-Key makes a retry of the same caller succeed again.
      const { userGroup, embed } = await embedTokenLifecycle.verify(request.caller, token, idempotencyKeyOf(request));
      return {
        ...withUserGroup(userGroup),
        embed: {
          embed_id: embed.embedId,
          origin: embed.origin,
          properties: embed.properties,
          access_rules: embed.accessRules,
          expires_at: embed.expiresAt,
        },
      };
    },
  );

  app.post(
    '/user/embed_token',
    {
      schema: routeSchema(
        'mintEmbedToken',
        'Mint an embed token',
        'A short-lived signed credential (ES256 JWS) for a page to carry instead of the group token; any scope. Verify it offline against /w/<workspace>/.well-known/jwks.json, or online with POST /api/user/verify.',
        MintEmbedTokenBody,
        EmbedTokenResponse,
      ),
      // Minting changes nothing stored: a retry mints another token, as good as the first. Its group
      // read confirms the API token.
      config: { readOnly: true, confirmsApiToken: true },
    },
    async (request, reply) => {
      const { body } = request;
      const minted = await embedTokens.mint(request.caller, {
        userGroupId: body.user_group_id,
        expiresIn: body.expires_in,
        embedId: body.embed_id,
        origin: body.origin,
        properties: body.properties as JsonObject | undefined,
        singleUse: body.single_use,
        sessionSeconds: body.session_seconds,
        inactivitySeconds: body.inactivity_seconds,
      });
      // Written by the schema's serialiser (embed-token.presenter.ts), which skips Fastify's copy and scan.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(
        serializeEmbedTokenAnswer({
          embed_token: minted.embedToken,
          expires_at: minted.expiresAt,
          session_ends_at: minted.sessionEndsAt,
        }),
      );
    },
  );
};
