// POST /api/admin/user_groups/import over a real socket, with the sync's admission and bounds cases:
// admitted (scope, bodies in flight) before its body is read, refused at the first group past the bounds.
import { describeStreamedAdmission } from '../support/streamed-admission.js';
import { IMPORT_PATH } from './import-helpers.js';

describeStreamedAdmission({
  name: 'POST /api/admin/user_groups/import',
  path: IMPORT_PATH,
  idKey: 'provided_id',
  oneCreated: { success: 1, import: { dry_run: true, created: 1 } },
});
