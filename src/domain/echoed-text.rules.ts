/** The most characters of a caller's own text (a field name, a header value) echoed in a message or a log line. */
export const ECHO_LIMIT = 256;

/**
 * `text` cut to ECHO_LIMIT characters (code points, so no surrogate pair is split): whatever a caller
 * sends, what the service echoes of it stays small (docs/api.md#wire-conventions).
 */
export function echoable(text: string): string {
  if (text.length <= ECHO_LIMIT) return text;
  return Array.from(text.slice(0, 2 * ECHO_LIMIT))
    .slice(0, ECHO_LIMIT)
    .join('');
}
