import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { inEnvironment } from '../../domain/tenancy.js';
import type { UserGroupAdminService } from '../../domain/user-groups/user-group-admin.service.js';
import { EnvironmentQuery } from '../../wire/common.schemas.js';
import { decodeCursor, PageResponse, pageSize, toPageResponse } from '../../wire/cursor.js';
import { IdParam } from '../../wire/common.schemas.js';
import { apiRouteSchema } from '../route-schema.js';
import { AdminUserGroup, AdminUserGroupResponse } from '../../wire/user-groups.schemas.js';
import { presentAdminUserGroup } from '../../wire/user-group.presenter.js';
import { ListUserGroupsQuery } from '../../wire/admin-user-groups.schemas.js';

export const adminUserGroupRoutes: FastifyPluginAsyncTypebox<{ userGroupAdmin: UserGroupAdminService }> = async (
  app,
  { userGroupAdmin },
) => {
  app.get(
    '/admin/user_groups',
    {
      schema: apiRouteSchema('admin', 'List or search user groups', PageResponse('user_groups', AdminUserGroup), {
        operationId: 'listAdminUserGroups',
        description: "In team_id order, one environment (default: the API token's), cursor-paginated.",
        querystring: ListUserGroupsQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const page = await userGroupAdmin.listUserGroups(inEnvironment(request.caller, query.environment), {
        search: query.q,
        parent: query.parent,
        tag: query.tag,
        isDemoGroup: query.is_demo_group === undefined ? undefined : query.is_demo_group === 'true',
        afterTeamId: decodeCursor(query.cursor),
        limit: pageSize(query.limit),
      });
      return toPageResponse('user_groups', page, presentAdminUserGroup);
    },
  );

  app.get(
    '/admin/user_groups/:team_id',
    {
      schema: apiRouteSchema('admin', 'Get a user group by team_id', AdminUserGroupResponse, {
        operationId: 'getAdminUserGroup',
        params: Type.Object({ team_id: IdParam("The group's team_id.") }),
        querystring: EnvironmentQuery,
      }),
    },
    async (request) => {
      const caller = inEnvironment(request.caller, request.query.environment);
      return {
        success: 1 as const,
        user_group: presentAdminUserGroup(await userGroupAdmin.getUserGroup(caller, Number(request.params.team_id))),
      };
    },
  );
};
