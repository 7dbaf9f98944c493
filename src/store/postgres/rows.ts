/*
 * Decoding of node-postgres values into the domain's: bigint (int8) arrives as a string, because it
 * can exceed a JavaScript number; every id here stays far below 2^53, so a number is exact.
 * timestamptz arrives as a Date, whose toISOString() gives back the millisecond ISO text stored.
 */

export type Int8 = string | number;

export function toNumber(value: Int8): number {
  return Number(value);
}

export function nullableNumber(value: Int8 | null): number | null {
  return value === null ? null : Number(value);
}

export function iso(value: Date): string {
  return value.toISOString();
}

export function nullableIso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/** The row a statement that always returns one (an INSERT … RETURNING without conflict clause) gave. */
export function onlyRow<R>(rows: R[], what: string): R {
  const [row] = rows;
  if (row === undefined) throw new Error(`${what} returned no row`);
  return row;
}
