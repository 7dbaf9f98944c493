let counter = 0;

/** An id no other test in this process uses, so tests on a shared app or database stay independent. */
export function uniqueId(label: string): string {
  counter += 1;
  return `${label}-${counter}`;
}

/** An integer user_group_id no other test in this process uses. */
export function uniqueNumber(): number {
  counter += 1;
  return 1_000_000 + counter;
}
