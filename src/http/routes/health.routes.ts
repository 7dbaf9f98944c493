import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Store } from '../../store/store.js';
import { responses } from '../envelope.js';

const Status = Type.Object({ status: Type.Literal('ok') });
const tags = ['operations'];

export const healthRoutes: FastifyPluginAsyncTypebox<{ store: Pick<Store, 'ping'> }> = async (app, { store }) => {
  app.get('/healthz', { schema: { summary: 'The process is alive', tags, response: responses(Status) } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { summary: 'The database answers', tags, response: responses(Status) } }, async () => {
    await store.ping();
    return { status: 'ok' as const };
  });
};
