import { requestFailure } from '../wire/request-errors.js';
import type { FastifyInstance } from 'fastify';
import { jsonDefectError, MAX_BODY_DEPTH, parseStrictJson } from '../wire/strict-json.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

const UTF8_CHARSET = /^utf-?8$/i;
// fatal: bytes that are not UTF-8 are refused, not replaced with U+FFFD (which would alter the input).
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON is the only body format, and a body is taken exactly or not at all (docs/api.md#wire-conventions): UTF-8 bytes
 * only, one meaning per key, bounded nesting. An empty body reads as "no body" (rather than invalid
 * JSON) so that a GET sending only a query string with a JSON content type still works.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2];
      if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
        done(requestFailure.notJsonMediaType(), undefined);
        return;
      }
      let text: string;
      try {
        text = utf8.decode(body as Buffer);
      } catch {
        done(requestFailure.bodyNotUtf8(), undefined);
        return;
      }
      if (text === '') {
        done(null, undefined);
        return;
      }
      const parsed = parseStrictJson(text, MAX_BODY_DEPTH);
      if (parsed.ok) done(null, parsed.value);
      else done(jsonDefectError(parsed.defect), undefined);
    },
  );
}
