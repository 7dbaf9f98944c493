import { pino, type DestinationStream, type Logger } from 'pino';
import { echoable } from './domain/echoed-text.rules.js';

/**
 * Structured JSON logs. Request lines carry the path without its query string and never headers
 * or bodies, so no credential can reach a log; redaction is a second line of defence.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // The pid tells apart the processes of `ugs serve --workers N`, which write to one stdout.
      base: { service: 'ugs', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'req.headers["explo-authorization"]',
          'headers["explo-authorization"]',
          '*.token',
          '*.current_token',
          '*.secret',
        ],
        censor: '[redacted]',
      },
      serializers: {
        req: (request: { method?: string; url?: string; ip?: string }) => ({
          method: request.method,
          // The caller's text: cut, like everything a caller sends that is echoed.
          path: request.url === undefined ? undefined : echoable(request.url.split('?', 1)[0] ?? ''),
          remoteAddress: request.ip,
        }),
        res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
      },
    },
    destination,
  );
}
