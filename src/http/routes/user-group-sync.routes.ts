import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { inEnvironment } from '../../domain/tenancy.js';
import type { UserGroupSyncService } from '../../domain/user-group-sync/user-group-sync.service.js';
import { presentSync } from '../../wire/user-group-sync.presenter.js';
import { requestFailure } from '../../wire/request-errors.js';
import { SYNC_ITEM_BOUNDS, syncLineAt, type SyncFileLine } from '../../wire/user-group-sync.reader.js';
import { SYNC_BODY_LIMIT_BYTES, SyncQuery, SyncResponse } from '../../wire/user-group-sync.schemas.js';
import { apiRouteSchema } from '../route-schema.js';
import { acceptStreamedBodies, clientGone, streamedItems, type StreamedBodyRoute } from '../streamed-body.js';

/** The media types of a sync's body: a JSON array, or NDJSON (one group per line). */
export const SYNC_MEDIA_TYPES = ['application/json', 'application/x-ndjson'] as const;

/** A sync's body (docs/api.md#sync-tenants-as-code): admitted (admin scope) before it is read, then read group by group within its bounds. */
const SYNC_BODY: StreamedBodyRoute<SyncFileLine> = {
  scope: 'admin',
  mediaTypes: SYNC_MEDIA_TYPES,
  maxBytes: SYNC_BODY_LIMIT_BYTES,
  items: SYNC_ITEM_BOUNDS,
  item: syncLineAt,
  empty: requestFailure.syncBodyMissing,
};

/**
 * POST /api/admin/user_groups/sync (docs/api.md#sync-tenants-as-code), in a scope of its own: its body is not one JSON object
 * but many groups, up to 64 MiB, streamed (src/http/streamed-body.ts) and checked group by group, so
 * that a refusal names the group's line or index.
 */
export const userGroupSyncRoutes: FastifyPluginAsyncTypebox<{ userGroupSync: UserGroupSyncService }> = async (
  app,
  { userGroupSync },
) => {
  acceptStreamedBodies(app);

  app.post(
    '/admin/user_groups/sync',
    {
      config: {
        streamedBody: SYNC_BODY as StreamedBodyRoute,
        // A dry run changes nothing: like a read, it ignores Idempotency-Key and keeps no response.
        readOnly: (request) => (request.query as { dry_run?: string }).dry_run === 'true',
      },
      schema: apiRouteSchema('admin', 'Sync user groups to a desired state (plan, then apply)', SyncResponse, {
        operationId: 'syncUserGroups',
        description:
          'The desired state of many groups (a JSON array, or NDJSON with Content-Type application/x-ndjson; at most 10 000 groups, each at most 1 MiB, and 64 MiB) in, the plan out: per group create, update (with the changed fields) or unchanged, and with prune=TAG delete of the groups carrying TAG that the body leaves out. Applied unless dry_run=true: all or nothing, parents before children, each change audited and announced to webhooks with the sync id. The scope, rate limit and bodies in flight are checked before the body is read; a refusal names the group by line (NDJSON, from 1) or index (array, from 0).',
        querystring: SyncQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const result = await userGroupSync.sync(
        inEnvironment(request.caller, query.environment),
        streamedItems<SyncFileLine>(request),
        { dryRun: query.dry_run === 'true', pruneTag: query.prune, signal: clientGone(request) },
      );
      return presentSync(result);
    },
  );
};
