import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { unsupportedMediaType } from './error-handler.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

const UTF8_CHARSET = /^utf-?8$/i;

/**
 * JSON is the only body format. An empty body reads as "no body" (rather than invalid JSON) so
 * that a GET sending only a query string with a JSON content type still works.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
    const charset = /;\s*charset=("?)([^";]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2];
    if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
      done(unsupportedMediaType(), undefined);
      return;
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, (error, body) => {
      // The safe parser refuses prototype-polluting keys with the same error as broken JSON; tell
      // the caller which of the two it is.
      if (error && isValidJson(text)) done(forbiddenKeys(), undefined);
      else done(error, body);
    });
  });
}

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function forbiddenKeys(): AppError {
  return new AppError('invalid_field', 'Object keys "__proto__" and "constructor.prototype" are not accepted anywhere in a request body.');
}
