import { requestFailure } from '../wire/request-errors.js';
import type { FastifyInstance } from 'fastify';
import { sendError } from './error-handler.js';
import { echoable } from '../domain/echoed-text.rules.js';

/**
 * Fastify answers 404 for a known path with an unrouted method; the contract wants 405 with Allow.
 * Routes are collected as they are added, and the not-found handler checks the path against them.
 */
export function registerNotFoundHandler(app: FastifyInstance): void {
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+')}/?$`);
    const existing = routes.find((known) => known.pattern.source === pattern.source);
    const methods = ([] as string[]).concat(route.method);
    if (existing) methods.forEach((method) => existing.methods.add(method));
    else routes.push({ pattern, methods: new Set(methods) });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const route = routes.find((known) => known.pattern.test(path));
    if (route) {
      const allow = [...route.methods].join(', ');
      return sendError(requestFailure.methodNotAllowed(request.method, allow), request, reply, { Allow: allow });
    }
    return sendError(requestFailure.nothingAt(echoable(path)), request, reply);
  });
}
