import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotencyOwner } from '../domain/idempotency/idempotency.port.js';
import type {
  IdempotencyClaim,
  IdempotencyService,
  RecordedResponse,
} from '../domain/idempotency/idempotency.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A POST that changes nothing (verify), or a request of a route that changes nothing when it says
     * so (a sync's dry run): like a GET, it ignores Idempotency-Key and keeps no response.
     */
    readOnly?: boolean | ((request: FastifyRequest) => boolean);
  }
}

/** A `readOnly` of a route whose `?dry_run=true` changes nothing (a sync's, an import's). */
export const readOnlyWhenDryRun = (request: FastifyRequest): boolean =>
  (request.query as { dry_run?: string }).dry_run === 'true';

/** The methods that change something, which take an Idempotency-Key; GET is idempotent by contract and ignores the header. */
export const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
const WRITES = new Set<string>(WRITE_METHODS);

/** On an answer to a request with an Idempotency-Key whose response is not kept: a retry with the key runs it again. */
const NOT_STORED_HEADER = 'idempotent-stored';

/** Only an error envelope carries a request id; a replay carries the retry's, as its X-Request-Id does. */
function forThisRequest(response: RecordedResponse, requestId: string): string {
  if (response.status < 400) return response.body;
  const envelope = JSON.parse(response.body) as { error: { request_id: string } };
  envelope.error.request_id = requestId;
  return JSON.stringify(envelope);
}

/**
 * `Idempotency-Key` on the /api writes (docs/api.md). The key is claimed once the request is
 * authenticated and valid, so a refused request records nothing; the response is recorded as it
 * is sent, after the change's own transaction. Requests without the header cost nothing here.
 * Route hooks, attached as each write route is added: the routes registered after this on `api` get them.
 */
export function registerIdempotency(api: FastifyInstance, idempotency: IdempotencyService): void {
  const claims = new WeakMap<FastifyRequest, IdempotencyClaim>();

  const claimKey = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const { caller } = request;
    // An /api caller is an API token or a person (the CLI never comes through HTTP); keys are its own,
    // a person's in the workspace their session acts in.
    const owner: IdempotencyOwner =
      caller.actor.type === 'person'
        ? {
            person: {
              workspaceId: caller.tenant.workspaceId,
              issuer: caller.actor.issuer,
              subject: caller.actor.subject,
            },
          }
        : { apiTokenId: caller.actor.apiTokenId };
    const { readOnly } = request.routeOptions.config;
    if (typeof readOnly === 'function' && readOnly(request)) return;
    // A repeated header is refused like any other value with a space in it.
    const key = Array.isArray(header) ? header.join(', ') : header;
    const start = await idempotency.start(owner, key, {
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: request.params,
      query: request.query,
      body: request.idempotentBody ?? request.body,
    });
    if (start.kind === 'execute') {
      claims.set(request, start.claim);
      return;
    }
    return reply
      .code(start.response.status)
      .header('idempotent-replayed', 'true')
      .type('application/json; charset=utf-8')
      .send(forThisRequest(start.response, request.id));
  };

  const recordResponse = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = claims.get(request);
    if (!claim) return payload;
    claims.delete(request);
    try {
      // A failure of the service is not an answer, and only JSON text within the bound is ever kept:
      // otherwise the claim goes, so that a retry runs the request again, and the answer says so.
      if (reply.statusCode >= 500 || typeof payload !== 'string' || !idempotency.keeps(payload)) {
        await idempotency.release(claim);
        reply.header(NOT_STORED_HEADER, 'false');
      } else if (!(await idempotency.complete(claim, { status: reply.statusCode, body: payload }))) {
        request.log.warn('the idempotency key was taken over while the request ran; its response is not kept');
        reply.header(NOT_STORED_HEADER, 'false');
      }
    } catch (error) {
      // The change is done whatever became of its record: the response goes out all the same.
      request.log.error({ err: error }, 'could not record the response for its idempotency key');
    }
    return payload;
  };

  // Attached to the write routes alone: reads (and verify) ignore the header, and so pay nothing.
  api.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method);
    if (route.config?.readOnly === true || !methods.some((method) => WRITES.has(method))) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey];
    route.onSend = [...[route.onSend ?? []].flat(), recordResponse];
  });
}
