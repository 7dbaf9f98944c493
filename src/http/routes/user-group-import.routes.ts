import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { UserGroupTransferService } from '../../domain/user-groups/user-group-transfer.service.js';
import { failure } from '../../domain/errors.js';
import { parseCarriedFields } from '../../domain/user-groups/user-group-transfer.rules.js';
import { presentImport } from '../../wire/user-group-import.presenter.js';
import {
  IMPORT_ITEM_BOUNDS,
  importItemAt,
  unparsableImportItem,
  type ImportItem,
} from '../../wire/user-group-import.reader.js';
import { ImportQuery, ImportResponse } from '../../wire/user-group-import.schemas.js';
import { requestFailure } from '../../wire/request-errors.js';
import { SYNC_BODY_LIMIT_BYTES } from '../../wire/user-group-sync.schemas.js';
import { readOnlyWhenDryRun } from '../idempotency.js';
import { apiRouteSchema } from '../route-schema.js';
import { acceptStreamedBodies, clientGone, streamedItems, type StreamedBodyRoute } from '../streamed-body.js';
import { SYNC_MEDIA_TYPES } from './user-group-sync.routes.js';

/**
 * POST /api/admin/user_groups/import: the lines of `ugs groups import` (an export, the hosted
 * product's tokens included) over HTTP, with the sync's admission and streaming (src/http/streamed-body.ts)
 * and the CLI's rules and summary. Into the API token's own environment only.
 */
export const userGroupImportRoutes: FastifyPluginAsyncTypebox<{ userGroupTransfer: UserGroupTransferService }> = async (
  app,
  { userGroupTransfer },
) => {
  acceptStreamedBodies(app);

  const body: StreamedBodyRoute<ImportItem> = {
    scope: 'admin',
    mediaTypes: SYNC_MEDIA_TYPES,
    maxBytes: SYNC_BODY_LIMIT_BYTES,
    items: IMPORT_ITEM_BOUNDS,
    item: importItemAt,
    // A line that is not JSON is refused in the summary, as the CLI refuses it; the other lines go on.
    unparsable: unparsableImportItem,
    empty: requestFailure.syncBodyMissing,
    // Lines carry tokens: the Idempotency-Key's fingerprint takes each as a keyed hash.
    fingerprint: (item) => userGroupTransfer.fingerprintOf(item.line),
  };

  app.post(
    '/admin/user_groups/import',
    {
      config: {
        streamedBody: body as StreamedBodyRoute,
        // A dry run changes nothing: like a read, it ignores Idempotency-Key and keeps no response.
        readOnly: readOnlyWhenDryRun,
      },
      schema: apiRouteSchema('admin', 'Import user groups (the lines of an export)', ImportResponse, {
        operationId: 'importUserGroups',
        description:
          "The lines of `ugs groups import` (an export of this service, or the hosted product's groups with their tokens) as a JSON array, or NDJSON with Content-Type application/x-ndjson: at most 10 000 groups, each at most 1 MiB, and 64 MiB. Upserts by provided_id (the user_group_id) into the API token's own workspace and environment (a line whose api_environment_tag names the other one is refused), with the CLI's rules and summary: each line created, updated, unchanged or refused with its reason (a refused line writes nothing; the others are written, in batches, parents before children). A line whose token differs from its group's current one is refused unless replace_tokens=true, which rotates it (user_group.token_rotated). require_fields (comma-separated) refuses a line lacking any of those fields; each line that lacked a field is listed in lacking (no supplement over HTTP: a line carries its fields itself). dry_run=true writes nothing. The scope, rate limit and bodies in flight are checked before the body is read; a client that goes before its body is read has nothing written.",
        querystring: ImportQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const { environment } = request.caller.tenant;
      const items = streamedItems<ImportItem>(request);
      const form = items[0] !== undefined && 'index' in items[0].at ? 'array' : 'lines';
      // The API token decides where an import writes: a line naming another environment is refused.
      const lines = items.map(({ line }) =>
        'group' in line && (line.group.api_environment_tag ?? environment) !== environment
          ? { line: line.line, error: failure.importOtherEnvironment(environment).message }
          : line,
      );
      // The CLI's --require-fields list, checked the same way: an unknown name is refused, not ignored.
      const required = query.require_fields === undefined ? undefined : parseCarriedFields(query.require_fields);
      if (required && 'error' in required) throw requestFailure.invalidField('require_fields', required.error);
      const dryRun = query.dry_run === 'true';
      const summary = await userGroupTransfer.importUserGroups(request.caller, lines, {
        environment,
        dryRun,
        replaceTokens: query.replace_tokens === 'true',
        ...(required ? { requireFields: required.fields } : {}),
        signal: clientGone(request),
      });
      return presentImport(summary, dryRun, form);
    },
  );
};
