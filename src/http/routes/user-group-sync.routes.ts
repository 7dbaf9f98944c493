import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { inEnvironment } from '../../domain/tenancy.js';
import type { UserGroupSyncService } from '../../domain/user-group-sync/user-group-sync.service.js';
import { presentSync } from '../../wire/user-group-sync.presenter.js';
import { requestFailure } from '../../wire/request-errors.js';
import { readSyncFile } from '../../wire/user-group-sync.reader.js';
import { SYNC_BODY_LIMIT_BYTES, SyncQuery, SyncResponse } from '../../wire/user-group-sync.schemas.js';
import { jsonDefectError, MAX_BODY_DEPTH, parseStrictJson } from '../strict-json.js';
import { apiRouteSchema } from '../route-schema.js';

const UTF8_CHARSET = /^utf-?8$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The media types of a sync's body: a JSON array, or NDJSON (one group per line). */
export const SYNC_MEDIA_TYPES = ['application/json', 'application/x-ndjson'] as const;

/**
 * POST /api/admin/user_groups/sync (SPEC §16), in a scope of its own: its body is not one JSON object
 * but many groups, up to 64 MiB, read as text here and checked group by group, so that a refusal
 * names the group's line or index.
 */
export const userGroupSyncRoutes: FastifyPluginAsyncTypebox<{ userGroupSync: UserGroupSyncService }> = async (
  app,
  { userGroupSync },
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser([...SYNC_MEDIA_TYPES], { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2];
    if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
      done(requestFailure.notJsonMediaType(), undefined);
      return;
    }
    try {
      done(null, utf8.decode(body as Buffer));
    } catch {
      done(requestFailure.bodyNotUtf8(), undefined);
    }
  });

  app.post(
    '/admin/user_groups/sync',
    {
      bodyLimit: SYNC_BODY_LIMIT_BYTES,
      schema: apiRouteSchema('admin', 'Sync user groups to a desired state (plan, then apply)', SyncResponse, {
        operationId: 'syncUserGroups',
        description:
          'The desired state of many groups (a JSON array, or NDJSON with Content-Type application/x-ndjson; at most 10 000 groups and 64 MiB) in, the plan out: per group create, update (with the changed fields) or unchanged, and with prune=TAG delete of the groups carrying TAG that the body leaves out. Applied unless dry_run=true: all or nothing, parents before children, each change audited and announced to webhooks with the sync id. A refusal names the group by line (NDJSON, from 1) or index (array, from 0).',
        querystring: SyncQuery,
      }),
    },
    async (request) => {
      const text = typeof request.body === 'string' ? request.body : '';
      if (text.trim() === '') throw requestFailure.syncBodyMissing();
      const lines = readSyncFile(text, (json, nested) => {
        // An array wraps the groups: one level more than a single group's body may have.
        const parsed = parseStrictJson(json, nested ? MAX_BODY_DEPTH + 1 : MAX_BODY_DEPTH);
        if (!parsed.ok) throw jsonDefectError(parsed.defect);
        return parsed.value;
      });
      const { query } = request;
      const result = await userGroupSync.sync(inEnvironment(request.caller, query.environment), lines, {
        dryRun: query.dry_run === 'true',
        pruneTag: query.prune,
      });
      return presentSync(result);
    },
  );
};
