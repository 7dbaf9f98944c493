import { useState } from 'preact/hooks';
import { api } from '../api';
import { Alert, Loading, PageHeader, Section, TextField } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
import type { Schema } from '../types';

/** The workspace's schemas (the keys of a mapping): list and create. */
export function SchemasScreen() {
  const { announce } = useConsole();
  const schemas = useLoad(() => api<{ schemas: Schema[] }>('GET', '/api/admin/schemas'), []);
  const [name, setName] = useState('');
  const { errors, failure, busy, run } = useSubmit();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = await run(() => api<{ schema: Schema }>('POST', '/api/admin/schemas', { body: { name } }), ['name']);
    if (!body) return;
    setName('');
    announce(`Created schema ${body.schema.name} (id ${body.schema.id}).`);
    schemas.reload();
  };
  return (
    <>
      <PageHeader title="Schemas" />
      <Section title="Create a schema">
        {failure && <Alert>{failure}</Alert>}
        <form class="inline-form" onSubmit={(event) => void submit(event)}>
          <TextField label="Name" name="name" required value={name} error={errors.name} onValue={setName} />
          <div class="inline-submit">
            <button type="submit" disabled={busy}>
              Create schema
            </button>
          </div>
        </form>
      </Section>
      <Section title="Schemas of this workspace">
        {schemas.error && <Alert>{schemas.error.message}</Alert>}
        {!schemas.data && !schemas.error && <Loading what="schemas" />}
        {schemas.data && schemas.data.schemas.length === 0 && <p class="muted">No schema yet.</p>}
        {schemas.data && schemas.data.schemas.length > 0 && (
          <table class="compact">
            <caption class="visually-hidden">Schemas</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
              </tr>
            </thead>
            <tbody>
              {schemas.data.schemas.map((schema) => (
                <tr key={schema.id}>
                  <td>{schema.id}</td>
                  <td>{schema.name}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
