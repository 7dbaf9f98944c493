import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { OperationsService } from '../../domain/operations.service.js';
import { responses } from '../../wire/envelope.js';

const Status = Type.Object({ status: Type.Literal('ok') });
const tags = ['operations'];

export const healthRoutes: FastifyPluginAsyncTypebox<{ operations: Pick<OperationsService, 'ready'> }> = async (
  app,
  { operations },
) => {
  app.get('/healthz', { schema: { summary: 'The process is alive', tags, response: responses(Status) } }, async () => ({
    status: 'ok' as const,
  }));

  app.get('/readyz', { schema: { summary: 'The database answers', tags, response: responses(Status) } }, async () => {
    await operations.ready();
    return { status: 'ok' as const };
  });
};
