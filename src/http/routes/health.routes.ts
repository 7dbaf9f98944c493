import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { OperationsService } from '../../domain/operations.service.js';
import { responses } from '../../wire/envelope.js';
import { PUBLIC_ROUTE } from '../route-schema.js';
import { requestFailure } from '../../wire/request-errors.js';

const Status = Type.Object({ status: Type.Literal('ok') });
const tags = ['operations'];

export const healthRoutes: FastifyPluginAsyncTypebox<{
  operations: Pick<OperationsService, 'ready'>;
  isStopping: () => boolean;
}> = async (app, { operations, isStopping }) => {
  const schema = (operationId: string, summary: string) => ({
    operationId,
    summary,
    tags,
    ...PUBLIC_ROUTE,
    response: responses(Status),
  });
  app.get('/healthz', { schema: schema('checkLiveness', 'The process is alive') }, async () => ({
    status: 'ok' as const,
  }));

  app.get(
    '/readyz',
    { schema: schema('checkReadiness', 'The database answers and the process is not stopping') },
    async () => {
      if (isStopping()) throw requestFailure.shuttingDown();
      await operations.ready();
      return { status: 'ok' as const };
    },
  );
};
