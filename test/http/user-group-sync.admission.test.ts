// POST /api/admin/user_groups/sync over a real socket: admitted (scope, bodies in flight) before its
// body is read, and its body refused at the first group past the bounds, before the rest is sent.
import { describeStreamedAdmission } from '../support/streamed-admission.js';
import { SYNC_PATH } from './sync-helpers.js';

describeStreamedAdmission({
  name: 'POST /api/admin/user_groups/sync',
  path: SYNC_PATH,
  idKey: 'user_group_id',
  oneCreated: { success: 1, sync: { summary: { create: 1 } } },
});
