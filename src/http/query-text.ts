import { requestFailure } from '../wire/request-errors.js';
import { echoable } from '../domain/echoed-text.rules.js';

/**
 * Query values are text like any field (docs/api.md#wire-conventions): a value whose percent-escapes are not UTF-8 (a
 * lone surrogate's included) is refused rather than decoded into U+FFFD, and so is a NUL, which
 * PostgreSQL cannot compare and SQLite cuts text at. Checked on the raw URL, with the strict decoder,
 * before the router's lenient query parser hands the values on.
 */
export function assertQueryText(url: string): void {
  const start = url.indexOf('?');
  if (start === -1) return;
  for (const pair of url.slice(start + 1).split('&')) {
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const name = decodeStrictly(rawName);
    const value = equals === -1 ? '' : decodeStrictly(pair.slice(equals + 1));
    const field = echoable(name ?? rawName);
    if (name === undefined || value === undefined) {
      throw requestFailure.queryNotUtf8(field);
    }
    if (name.includes('\u0000') || value.includes('\u0000')) {
      throw requestFailure.queryNul(field);
    }
  }
}

/** Undefined when the text is not percent-encoded UTF-8 (raw bytes beyond ASCII included: a URL carries them escaped). */
function decodeStrictly(text: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(text)) return undefined;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
