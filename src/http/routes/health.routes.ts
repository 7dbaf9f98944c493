import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { OperationsService } from '../../domain/operations.service.js';
import { responses } from '../../wire/envelope.js';
import { PUBLIC_ROUTE } from '../route-schema.js';
import { requestFailure } from '../../wire/request-errors.js';

const Status = Type.Object({ status: Type.Literal('ok') });
/** /healthz also says which release answers: during a rolling upgrade, two versions serve side by side. */
const Liveness = Type.Object({ status: Type.Literal('ok'), version: Type.String() });
const tags = ['operations'];

export const healthRoutes: FastifyPluginAsyncTypebox<{
  operations: Pick<OperationsService, 'ready'>;
  isStopping: () => boolean;
  version: string;
}> = async (app, { operations, isStopping, version }) => {
  const schema = <T extends typeof Status | typeof Liveness>(operationId: string, summary: string, body: T) => ({
    operationId,
    summary,
    tags,
    ...PUBLIC_ROUTE,
    response: responses(body),
  });
  app.get('/healthz', { schema: schema('checkLiveness', 'The process is alive', Liveness) }, async () => ({
    status: 'ok' as const,
    version,
  }));

  app.get(
    '/readyz',
    { schema: schema('checkReadiness', 'The database answers and the process is not stopping', Status) },
    async () => {
      if (isStopping()) throw requestFailure.shuttingDown();
      await operations.ready();
      return { status: 'ok' as const };
    },
  );
};
