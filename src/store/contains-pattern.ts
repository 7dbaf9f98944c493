/**
 * A LIKE pattern (with ESCAPE '\', PostgreSQL's default) matching text that contains `text` literally,
 * wildcards included: both engines' name search. Lower-casing it leaves the escapes as they are.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
