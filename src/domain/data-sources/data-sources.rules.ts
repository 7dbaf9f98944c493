import { creationChanges, deletionChanges, changedFields } from '../audit/audit-entry.js';
import type { AuditEntry, Audited } from '../audit/audit-entry.js';
import type { AuditAction, FieldChanges } from '../audit/audit.records.js';
import type { DataSourcePatch, DataSourceRecord } from './data-source.records.js';

/*
 * What creating, changing and deleting a data source does, as pure functions over the rows the
 * engine read inside the change's transaction (the data source, locked, and how many groups map to
 * it). Each engine runs the SQL these decisions name and writes the returned audit entries.
 */

/** How a change of a data source came out. */
export type DataSourceChange =
  { status: 'changed'; dataSource: DataSourceRecord } | { status: 'not_found' } | { status: 'in_use'; usedBy: number };

/** A decided change: its outcome and audit entries, and the row to write (`write`) or delete (`remove`). */
export interface DataSourcePlan extends Audited<DataSourceChange> {
  write?: DataSourceRecord;
  remove?: DataSourceRecord;
}

/** The audited fields of a data source, under the snake_case names its audit events use. */
function auditFields(record: DataSourceRecord): Record<string, unknown> {
  return {
    id: record.id,
    provided_id: record.providedId,
    name: record.name,
    schema_id: record.schemaId,
    // Named only when set, so the events of a data source of one environment read as before.
    ...(record.shared ? { shared: true } : {}),
  };
}

function entry(action: AuditAction, record: DataSourceRecord, changes: FieldChanges): AuditEntry {
  return {
    action,
    workspaceId: record.workspaceId,
    environment: record.environment,
    providedId: record.providedId,
    changes,
  };
}

const refused = (result: DataSourceChange): DataSourcePlan => ({ result, entries: [] });

export function dataSourceCreated(record: DataSourceRecord): AuditEntry {
  return entry('data_source.created', record, creationChanges(auditFields(record)));
}

/**
 * Renaming or re-iding is always allowed; moving to another schema only while no group maps to the
 * data source (their mapping pairs it with the old schema). A patch that changes nothing writes nothing.
 */
export function planDataSourceUpdate(
  current: DataSourceRecord | null,
  patch: DataSourcePatch,
  usedBy: number,
): DataSourcePlan {
  if (!current) return refused({ status: 'not_found' });
  const after: DataSourceRecord = {
    ...current,
    providedId: patch.providedId ?? current.providedId,
    name: patch.name ?? current.name,
    schemaId: patch.schemaId ?? current.schemaId,
  };
  if (after.schemaId !== current.schemaId && usedBy > 0) return refused({ status: 'in_use', usedBy });
  const changes = changedFields(auditFields(current), auditFields(after));
  if (Object.keys(changes).length === 0) return { result: { status: 'changed', dataSource: current }, entries: [] };
  return {
    result: { status: 'changed', dataSource: after },
    entries: [entry('data_source.updated', after, changes)],
    write: after,
  };
}

/** A data source goes only while no group maps to it. */
export function planDataSourceDeletion(current: DataSourceRecord | null, usedBy: number): DataSourcePlan {
  if (!current) return refused({ status: 'not_found' });
  if (usedBy > 0) return refused({ status: 'in_use', usedBy });
  return {
    result: { status: 'changed', dataSource: current },
    entries: [entry('data_source.deleted', current, deletionChanges(auditFields(current)))],
    remove: current,
  };
}
