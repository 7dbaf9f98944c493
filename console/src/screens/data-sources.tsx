import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm';
import { Alert, Loading, PageHeader, Section, Select, TextField } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
import type { DataSource, Schema } from '../types';

/** The environment's data sources: list, create, delete (refused while a group maps to one). */
export function DataSourcesScreen() {
  const { environment, announce } = useConsole();
  const loaded = useLoad(async () => {
    const [sources, schemas] = await Promise.all([
      api<{ data_sources: DataSource[] }>('GET', '/api/admin/data_sources', { query: { environment } }),
      api<{ schemas: Schema[] }>('GET', '/api/admin/schemas'),
    ]);
    return { sources: sources.data_sources, schemas: schemas.schemas };
  }, [environment]);
  const [draft, setDraft] = useState({ providedId: '', name: '', schemaId: '' });
  const [deleting, setDeleting] = useState<DataSource | null>(null);
  const create = useSubmit();
  const remove = useSubmit();
  const schemas = loaded.data?.schemas ?? [];
  const schemaName = (id: number) => schemas.find((schema) => schema.id === id)?.name ?? `#${id}`;

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { provided_id: draft.providedId, name: draft.name, schema_id: Number(draft.schemaId || schemas[0]?.id), environment };
    const created = await create.run(() => api<{ data_source: DataSource }>('POST', '/api/admin/data_sources', { body }), ['provided_id', 'name', 'schema_id']);
    if (!created) return;
    setDraft({ providedId: '', name: '', schemaId: '' });
    announce(`Created data source ${created.data_source.provided_id}.`);
    loaded.reload();
  };
  const confirmDelete = async () => {
    const target = deleting;
    if (!target) return;
    const done = await remove.run(() => api('DELETE', `/api/admin/data_sources/${target.id}`, { query: { environment } }));
    setDeleting(null);
    if (done) {
      announce(`Deleted data source ${target.provided_id}.`);
      loaded.reload();
    }
  };

  return (
    <>
      <PageHeader title="Data sources" />
      <Section title={`Create a data source in ${environment}`}>
        {create.failure && <Alert>{create.failure}</Alert>}
        {loaded.data && schemas.length === 0 ? (
          <p class="muted">Create a schema first: a data source serves one.</p>
        ) : (
          <form class="inline-form" onSubmit={(event) => void submit(event)}>
            <TextField label="Provided id" name="provided_id" required value={draft.providedId} error={create.errors.provided_id} onValue={(providedId) => setDraft({ ...draft, providedId })} />
            <TextField label="Name" name="name" required value={draft.name} error={create.errors.name} onValue={(name) => setDraft({ ...draft, name })} />
            <Select
              label="Schema"
              value={draft.schemaId || String(schemas[0]?.id ?? '')}
              options={schemas.map((schema) => [String(schema.id), `${schema.name} (${schema.id})`] as const)}
              error={create.errors.schema_id}
              onValue={(schemaId) => setDraft({ ...draft, schemaId })}
            />
            <div class="inline-submit">
              <button type="submit" disabled={create.busy}>
                Create data source
              </button>
            </div>
          </form>
        )}
      </Section>
      <Section title={`Data sources in ${environment}`}>
        {remove.failure && <Alert>{remove.failure}</Alert>}
        {loaded.error && <Alert>{loaded.error.message}</Alert>}
        {!loaded.data && !loaded.error && <Loading what="data sources" />}
        {loaded.data && loaded.data.sources.length === 0 && <p class="muted">No data source in {environment}.</p>}
        {loaded.data && loaded.data.sources.length > 0 && (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <caption class="visually-hidden">Data sources in {environment}</caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Provided id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Schema</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {loaded.data.sources.map((source) => (
                  <tr key={source.id}>
                    <td>{source.id}</td>
                    <td>
                      <code>{source.provided_id}</code>
                    </td>
                    <td>{source.name}</td>
                    <td>{schemaName(source.schema_id)}</td>
                    <td>
                      <button type="button" class="danger small" aria-label={`Delete ${source.provided_id}`} onClick={() => setDeleting(source)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      {deleting && (
        <ConfirmDialog title="Delete the data source?" confirm="Delete" danger busy={remove.busy} onConfirm={() => void confirmDelete()} onCancel={() => setDeleting(null)}>
          <p>
            <code>{deleting.provided_id}</code> is deleted. The service refuses while any user group maps to it.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
