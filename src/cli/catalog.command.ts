import { toDataSource } from '../wire/data-source.presenter.js';
import { toSchema } from '../wire/schema.presenter.js';
import { Command, Option } from 'commander';
import { MAX_CATALOGUE_ID } from '../wire/contract.constants.js';
import { inEnvironment, type Caller, type Environment } from '../domain/tenancy.js';
import type { Runtime } from '../runtime.js';
import {
  cliCaller,
  environmentOption,
  optionParser,
  positiveInteger,
  printJson,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';

/** Prints the new or changed object as JSON, or just its id for shell scripts. */
function printCreated(created: { id: number } & Record<string, unknown>, json: boolean | undefined): void {
  if (json) printJson(created);
  else process.stdout.write(`${created.id}\n`);
}

/** `--id`: the number to give the new schema or data source (to keep a catalogue's ids); else the next. */
function idOption(what: string): Option {
  return new Option(
    '--id <id>',
    `the ${what}'s id in the workspace, 1 to ${MAX_CATALOGUE_ID} (default: the next above every id issued)`,
  ).argParser(optionParser(positiveInteger));
}

export function schemasCommand(): Command {
  const schemas = new Command('schemas').description("manage schemas (the keys of a group's mapping)");

  subcommand(schemas, 'create', 'create a schema and print its id')
    .addOption(new Option('--name <name>', 'schema name, unique in the workspace').makeOptionMandatory())
    .addOption(idOption('schema'))
    .action(async (options: CommonOptions & { name: string; id?: number }) => {
      await withRuntime(options, async (runtime) => {
        const schema = await runtime.services.schemas.createSchema(await cliCaller(runtime, options.workspace), {
          name: options.name,
          ...(options.id !== undefined ? { id: options.id } : {}),
        });
        printCreated(toSchema(schema), options.json);
      });
    });

  subcommand(schemas, 'list', 'list the schemas of a workspace').action(async (options: CommonOptions) => {
    await withRuntime(options, async (runtime) => {
      const rows = (await runtime.services.schemas.listSchemas(await cliCaller(runtime, options.workspace))).map(
        toSchema,
      );
      printRows(rows, options.json);
    });
  });

  return schemas;
}

/** Data source ids are unique per workspace, so the CLI acts in whichever environment the id lives in. */
async function dataSourceCaller(runtime: Runtime, workspace: string, id: number): Promise<Caller> {
  const caller = await cliCaller(runtime, workspace);
  return inEnvironment(caller, await runtime.services.dataSources.environmentOfDataSource(caller, id));
}

export function dataSourcesCommand(): Command {
  const dataSources = new Command('data-sources').description("manage data sources (the values of a group's mapping)");

  subcommand(dataSources, 'create', 'create a data source and print its id')
    .addOption(
      new Option(
        '--provided-id <id>',
        'your own id for it, unique per workspace and environment',
      ).makeOptionMandatory(),
    )
    .addOption(new Option('--name <name>', 'display name').makeOptionMandatory())
    .addOption(new Option('--schema-id <id>', 'the schema it serves').argParser(positiveInteger).makeOptionMandatory())
    .addOption(environmentOption().makeOptionMandatory())
    .addOption(idOption('data source'))
    .addOption(new Option('--shared', 'mappable from every environment of the workspace, not only --environment'))
    .action(
      async (
        options: CommonOptions & {
          providedId: string;
          name: string;
          schemaId: number;
          environment: Environment;
          id?: number;
          shared?: boolean;
        },
      ) => {
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const dataSource = await runtime.services.dataSources.createDataSource(caller, {
            providedId: options.providedId,
            name: options.name,
            schemaId: options.schemaId,
            ...(options.id !== undefined ? { id: options.id } : {}),
            ...(options.shared ? { shared: true } : {}),
          });
          printCreated(toDataSource(dataSource), options.json);
        });
      },
    );

  subcommand(dataSources, 'list', 'list the data sources of one environment, the shared ones included')
    .addOption(environmentOption().default('Customer'))
    .action(async (options: CommonOptions & { environment: Environment }) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        printRows((await runtime.services.dataSources.listDataSources(caller)).map(toDataSource), options.json);
      });
    });

  subcommand(dataSources, 'update', "change a data source's provided id, name or schema")
    .argument('<id>', 'data source id', positiveInteger)
    .addOption(new Option('--provided-id <id>', 'new provided id'))
    .addOption(new Option('--name <name>', 'new display name'))
    .addOption(new Option('--schema-id <id>', 'new schema (refused while groups map to it)').argParser(positiveInteger))
    .action(async (id: number, options: CommonOptions & { providedId?: string; name?: string; schemaId?: number }) => {
      await withRuntime(options, async (runtime) => {
        const dataSource = await runtime.services.dataSources.updateDataSource(
          await dataSourceCaller(runtime, options.workspace, id),
          id,
          {
            ...(options.providedId !== undefined ? { providedId: options.providedId } : {}),
            ...(options.name !== undefined ? { name: options.name } : {}),
            ...(options.schemaId !== undefined ? { schemaId: options.schemaId } : {}),
          },
        );
        printCreated(toDataSource(dataSource), options.json);
      });
    });

  subcommand(dataSources, 'delete', 'delete a data source (refused while groups map to it)')
    .argument('<id>', 'data source id', positiveInteger)
    .action(async (id: number, options: CommonOptions) => {
      await withRuntime(options, async (runtime) => {
        const dataSource = await runtime.services.dataSources.deleteDataSource(
          await dataSourceCaller(runtime, options.workspace, id),
          id,
        );
        if (options.json) printJson(toDataSource(dataSource));
        else process.stdout.write(`deleted data source ${dataSource.id} (${dataSource.providedId})\n`);
      });
    });

  return dataSources;
}

export function workspacesCommand(): Command {
  const workspaces = new Command('workspaces').description('manage workspaces (tenants of this deployment)');
  const describeWorkspace = (workspace: { id: number; name: string; createdAt: string }) => ({
    id: workspace.id,
    name: workspace.name,
    created_at: workspace.createdAt,
  });

  subcommand(workspaces, 'create', 'create a workspace', { workspace: false })
    .argument('<name>', 'workspace name')
    .action(async (name: string, options: Omit<CommonOptions, 'workspace'>) => {
      await withRuntime(options, async (runtime) => {
        const workspace = await runtime.services.workspaces.createWorkspace(name, { type: 'cli' });
        if (options.json) printJson(describeWorkspace(workspace));
        else process.stdout.write(`${workspace.name}\n`);
      });
    });

  subcommand(workspaces, 'list', 'list workspaces', { workspace: false }).action(
    async (options: Omit<CommonOptions, 'workspace'>) => {
      await withRuntime(options, async (runtime) => {
        printRows((await runtime.services.workspaces.listWorkspaces()).map(describeWorkspace), options.json);
      });
    },
  );

  return workspaces;
}
