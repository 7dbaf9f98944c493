import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../components/confirm';
import { buttonColumn, DataTable, Rows, type Column } from '../components/data-table';
import { Alert, InlineSubmit, PageHeader, Section, Select, TextField } from '../components/ui';
import { useConfirmation, useConsole, useLoad, useSubmit } from '../hooks';
import { ugs } from '../service';
import type { DataSource } from '../types';

/** The environment's data sources: list, create, delete (refused while a group maps to one). */
export function DataSourcesScreen() {
  const { environment, announce } = useConsole();
  const loaded = useLoad(async () => {
    const [sources, schemas] = await Promise.all([ugs.listDataSources({ environment }), ugs.listSchemas()]);
    return { sources: sources.items, schemas: schemas.items };
  }, [environment]);
  const [draft, setDraft] = useState({ providedId: '', name: '', schemaId: '' });
  const create = useSubmit();
  const remove = useConfirmation(
    (source: DataSource) => ugs.deleteDataSource(source.id, { environment }),
    (source) => {
      announce(`Deleted data source ${source.provided_id}.`);
      loaded.reload();
    },
  );
  const schemas = loaded.data?.schemas ?? [];
  const schemaName = (id: number) => schemas.find((schema) => schema.id === id)?.name ?? `#${id}`;

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = {
      provided_id: draft.providedId,
      name: draft.name,
      schema_id: Number(draft.schemaId || schemas[0]?.id),
      environment,
    };
    const created = await create.run(() => ugs.createDataSource(body), ['provided_id', 'name', 'schema_id']);
    if (!created) return;
    setDraft({ providedId: '', name: '', schemaId: '' });
    announce(`Created data source ${created.provided_id}.`);
    loaded.reload();
  };

  const columns: Array<Column<DataSource>> = [
    { header: 'Id', cell: (source) => source.id },
    { header: 'Provided id', cell: (source) => <code>{source.provided_id}</code> },
    { header: 'Name', cell: (source) => source.name },
    { header: 'Schema', cell: (source) => schemaName(source.schema_id) },
    buttonColumn<DataSource>('Delete', (source) => source.provided_id, remove.ask, 'danger'),
  ];

  return (
    <>
      <PageHeader title="Data sources" />
      <Section title={`Create a data source in ${environment}`}>
        {create.failure && <Alert>{create.failure}</Alert>}
        {loaded.data && schemas.length === 0 ? (
          <p class="muted">Create a schema first: a data source serves one.</p>
        ) : (
          <form class="inline-form" onSubmit={(event) => void submit(event)}>
            <TextField
              label="Provided id"
              name="provided_id"
              required
              value={draft.providedId}
              error={create.errors.provided_id}
              onValue={(providedId) => setDraft({ ...draft, providedId })}
            />
            <TextField
              label="Name"
              name="name"
              required
              value={draft.name}
              error={create.errors.name}
              onValue={(name) => setDraft({ ...draft, name })}
            />
            <Select
              label="Schema"
              value={draft.schemaId || String(schemas[0]?.id ?? '')}
              options={schemas.map((schema) => [String(schema.id), `${schema.name} (${schema.id})`] as const)}
              error={create.errors.schema_id}
              onValue={(schemaId) => setDraft({ ...draft, schemaId })}
            />
            <InlineSubmit label="Create data source" busy={create.busy} />
          </form>
        )}
      </Section>
      <Section title={`Data sources in ${environment}`}>
        {remove.failure && <Alert>{remove.failure}</Alert>}
        <Rows
          load={loaded}
          items={loaded.data?.sources}
          what="data sources"
          empty={`No data source in ${environment}.`}
        >
          {(rows) => (
            <DataTable
              caption={`Data sources in ${environment}`}
              columns={columns}
              rows={rows}
              rowKey={(source) => source.id}
            />
          )}
        </Rows>
      </Section>
      {remove.pending && (
        <ConfirmDialog
          title="Delete the data source?"
          confirm="Delete"
          danger
          busy={remove.busy}
          onConfirm={() => void remove.confirm()}
          onCancel={remove.cancel}
        >
          <p>
            <code>{remove.pending.provided_id}</code> is deleted. The service refuses while any user group maps to it.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
