import type { ComponentChildren } from 'preact';
import { Alert, Loading } from './ui';

export interface Column<T> {
  header: string;
  /** A column without a visible header (the actions): its header is read to screen readers only. */
  hiddenHeader?: boolean;
  class?: string;
  cell(row: T): ComponentChildren;
}

/**
 * A table of rows with a caption for screen readers. It scrolls sideways inside itself when the
 * window is narrow, and so takes the focus, for the keyboard to scroll it.
 */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  compact = false,
}: {
  caption: string;
  columns: Array<Column<T>>;
  rows: T[];
  rowKey(row: T): string | number;
  compact?: boolean;
}) {
  return (
    <div class="table-scroll" tabIndex={0}>
      <table class={compact ? 'compact' : undefined}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col">
                {column.hiddenHeader ? <span class="visually-hidden">{column.header}</span> : column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.header} class={column.class}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A column of one button per row (Revoke, Delete, Retry), named for screen readers by its row. */
export function buttonColumn<T>(
  label: string,
  nameOf: (row: T) => string,
  onClick: (row: T) => void,
  tone: 'danger' | 'secondary',
): Column<T> {
  return {
    header: 'Actions',
    hiddenHeader: true,
    cell: (row) => (
      <button type="button" class={`${tone} small`} aria-label={`${label} ${nameOf(row)}`} onClick={() => onClick(row)}>
        {label}
      </button>
    ),
  };
}

/** What a list load came to: its failure, "loading", an empty note, or the rows. */
export function Rows<T>({
  load,
  items,
  what,
  empty,
  children,
}: {
  load: { error?: Error; loading: boolean };
  items: T[] | undefined;
  what: string;
  empty: string;
  children(items: T[]): ComponentChildren;
}) {
  if (load.error) return <Alert>{load.error.message}</Alert>;
  if (!items) return load.loading ? <Loading what={what} /> : null;
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return <>{children(items)}</>;
}
