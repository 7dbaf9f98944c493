import type { SyncPlanItem, SyncSummary } from '../domain/user-group-sync/user-group-sync.rules.js';
import { positionText } from '../domain/errors.js';

/*
 * A sync's plan as people read it (docs/api.md#sync-tenants-as-code): a diff, one block per group that changes, colour on a
 * terminal (green create, yellow update, red delete) and plain text otherwise, then a summary line.
 * Unchanged groups are counted, not listed. Tokens are never part of a plan.
 */

const COLOURS = { create: '\x1b[32m', update: '\x1b[33m', delete: '\x1b[31m', dim: '\x1b[2m', reset: '\x1b[0m' };
const MARKS = { create: '+', update: '~', delete: '-' } as const;

const show = (value: unknown) => JSON.stringify(value);

export function renderSyncPlan(items: SyncPlanItem[], colour: boolean): string {
  const paint = (code: string, text: string) => (colour ? `${code}${text}${COLOURS.reset}` : text);
  const out: string[] = [];
  for (const item of items) {
    if (item.action === 'unchanged') continue;
    const where = item.at ? paint(COLOURS.dim, ` (${positionText(item.at).toLowerCase()})`) : '';
    out.push(paint(COLOURS[item.action], `${MARKS[item.action]} ${item.action} ${item.providedId}`) + where);
    for (const [field, { before, after }] of Object.entries(item.changes ?? {})) {
      if (item.action === 'create') out.push(`    ${field}: ${show(after)}`);
      else if (item.action === 'delete') out.push(paint(COLOURS.dim, `    ${field}: ${show(before)}`));
      else out.push(`    ${field}: ${show(before)} → ${show(after)}`);
    }
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

export function summaryLine(summary: SyncSummary, outcome: 'dry-run' | 'applied' | 'nothing'): string {
  const counts = `${summary.create} to create, ${summary.update} to update, ${summary.delete} to delete, ${summary.unchanged} unchanged`;
  const tail =
    outcome === 'dry-run' ? 'dry run: nothing changed' : outcome === 'applied' ? 'applied' : 'nothing to apply';
  return `Plan: ${counts} (${tail}).\n`;
}
