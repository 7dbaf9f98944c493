import { Command, Option } from 'commander';
import { WEBHOOK_DELIVERY_STATUSES } from '../domain/webhook-endpoints/webhook.records.js';
import { WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import type {
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
  WebhookEventFilter,
} from '../domain/webhook-endpoints/webhook.records.js';
import type { Environment } from '../domain/tenancy.js';
import {
  cliCaller,
  environmentOption,
  pageLimit,
  positiveInteger,
  printJson,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';
import { allowPrivateOption, allowPrivateWebhooks } from './webhook-options.js';

const describeEndpoint = (endpoint: WebhookEndpointRecord) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events.join(','),
  environment: endpoint.environment,
  enabled: endpoint.enabled,
  description: endpoint.description,
  created_at: endpoint.createdAt,
});

const describeDelivery = (delivery: WebhookDeliveryRecord) => ({
  id: delivery.id,
  endpoint_id: delivery.endpointId,
  event_id: delivery.eventId,
  event_type: delivery.eventType,
  status: delivery.status,
  attempts: delivery.attempts,
  next_attempt_at: delivery.nextAttemptAt,
  last_response_status: delivery.lastResponseStatus,
  last_error: delivery.lastError,
  created_at: delivery.createdAt,
});

/** `--events user_group.created,user_group.deleted` or `*`. */
function eventList(text: string): WebhookEventFilter[] {
  return text.split(',').map((event) => event.trim()) as WebhookEventFilter[];
}

interface EndpointFlags extends CommonOptions {
  environment?: Environment;
  webhookAllowPrivate?: boolean;
}

const runtimeOptions = (options: EndpointFlags) => ({
  ...options,
  allowPrivateWebhooks: allowPrivateWebhooks(options),
});

/** Prints an endpoint with its secret: the only time the secret is shown. */
function printIssued(endpoint: WebhookEndpointRecord, secret: string, json: boolean | undefined): void {
  if (json) printJson({ ...describeEndpoint(endpoint), events: endpoint.events, secret });
  else
    process.stdout.write(
      `webhook endpoint ${endpoint.id} (${endpoint.url})\nsigning secret, shown only this once: ${secret}\n`,
    );
}

/** `ugs webhooks …`: the admin API's webhook endpoints and deliveries (docs/api.md#webhooks). */
export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks').description('manage webhook endpoints and their deliveries');
  const inEnvironment = (command: Command) => command.addOption(environmentOption('environment (default Customer)'));
  const idArgument = (command: Command) =>
    command.argument('<id>', 'webhook endpoint id (see `ugs webhooks list`)', positiveInteger);

  inEnvironment(subcommand(webhooks, 'create', 'add an endpoint and print its signing secret (shown only this once)'))
    .addOption(new Option('--url <url>', 'where events are POSTed').makeOptionMandatory())
    .addOption(
      new Option('--events <list>', `comma-separated: ${WEBHOOK_EVENT_TYPES.join(', ')}; or * for all`)
        .default(['*'], '*')
        .argParser(eventList),
    )
    .addOption(new Option('--description <text>', 'a label for listings').default(''))
    .addOption(allowPrivateOption())
    .action(async (options: EndpointFlags & { url: string; events: WebhookEventFilter[]; description: string }) => {
      await withRuntime(runtimeOptions(options), async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const { record, secret } = await runtime.services.webhookEndpoints.create(caller, {
          url: options.url,
          events: options.events,
          environment: caller.tenant.environment,
          description: options.description,
        });
        printIssued(record, secret, options.json);
      });
    });

  inEnvironment(subcommand(webhooks, 'list', 'list the endpoints of an environment (never their secrets)')).action(
    async (options: EndpointFlags) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        printRows((await runtime.services.webhookEndpoints.list(caller)).map(describeEndpoint), options.json);
      });
    },
  );

  idArgument(inEnvironment(subcommand(webhooks, 'update', 'change an endpoint')))
    .addOption(new Option('--url <url>', 'a new URL'))
    .addOption(new Option('--events <list>', 'a new list of event types, or *').argParser(eventList))
    .addOption(new Option('--description <text>', 'a new label'))
    .addOption(new Option('--enable', 'send to it again (starts a new failure window)'))
    .addOption(new Option('--disable', 'send nothing to it until enabled').conflicts('enable'))
    .addOption(allowPrivateOption())
    .action(
      async (
        id: number,
        options: EndpointFlags & {
          url?: string;
          events?: WebhookEventFilter[];
          description?: string;
          enable?: boolean;
          disable?: boolean;
        },
      ) => {
        const change = {
          ...(options.url === undefined ? {} : { url: options.url }),
          ...(options.events === undefined ? {} : { events: options.events }),
          ...(options.description === undefined ? {} : { description: options.description }),
          ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
        };
        if (Object.keys(change).length === 0)
          throw new Error('Give at least one of --url, --events, --description, --enable, --disable.');
        await withRuntime(runtimeOptions(options), async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const updated = await runtime.services.webhookEndpoints.update(caller, id, change);
          if (options.json) printJson(describeEndpoint(updated));
          else
            process.stdout.write(
              `updated webhook endpoint ${updated.id} (${updated.url}, ${updated.enabled ? 'enabled' : 'disabled'})\n`,
            );
        });
      },
    );

  idArgument(inEnvironment(subcommand(webhooks, 'delete', 'delete an endpoint and its deliveries'))).action(
    async (id: number, options: EndpointFlags) => {
      await withRuntime(options, async (runtime) => {
        const deleted = await runtime.services.webhookEndpoints.remove(
          await cliCaller(runtime, options.workspace, options.environment),
          id,
        );
        if (options.json) printJson(describeEndpoint(deleted));
        else process.stdout.write(`deleted webhook endpoint ${deleted.id} (${deleted.url})\n`);
      });
    },
  );

  idArgument(
    inEnvironment(
      subcommand(
        webhooks,
        'rotate-secret',
        'sign with a new secret from now on; the old one signs beside it for 24 hours',
      ),
    ),
  ).action(async (id: number, options: EndpointFlags) => {
    await withRuntime(options, async (runtime) => {
      const { record, secret } = await runtime.services.webhookEndpoints.rotateSecret(
        await cliCaller(runtime, options.workspace, options.environment),
        id,
      );
      printIssued(record, secret, options.json);
    });
  });

  inEnvironment(subcommand(webhooks, 'deliveries', 'list deliveries, newest first'))
    .addOption(new Option('--endpoint <id>', 'only those to this endpoint').argParser(positiveInteger))
    .addOption(new Option('--status <status>', 'only those with this status').choices(WEBHOOK_DELIVERY_STATUSES))
    .addOption(new Option('--limit <n>', 'at most this many').default(100).argParser(pageLimit))
    .action(async (options: EndpointFlags & { endpoint?: number; status?: WebhookDeliveryStatus; limit: number }) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const page = await runtime.services.webhookEndpoints.listDeliveries(caller, {
          endpointId: options.endpoint,
          status: options.status,
          limit: options.limit,
        });
        printRows(page.items.map(describeDelivery), options.json);
      });
    });

  inEnvironment(subcommand(webhooks, 'retry', 'queue a delivery again now, with a fresh attempt budget'))
    .argument('<delivery-id>', 'webhook delivery id (see `ugs webhooks deliveries`)', positiveInteger)
    .action(async (id: number, options: EndpointFlags) => {
      await withRuntime(options, async (runtime) => {
        const retried = await runtime.services.webhookEndpoints.retryDelivery(
          await cliCaller(runtime, options.workspace, options.environment),
          id,
        );
        if (options.json) printJson(describeDelivery(retried));
        else process.stdout.write(`delivery ${retried.id} (${retried.eventType}) queued again\n`);
      });
    });

  return webhooks;
}
