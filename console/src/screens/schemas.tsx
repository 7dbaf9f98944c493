import { useState } from 'preact/hooks';
import { DataTable, Rows, type Column } from '../components/data-table';
import { Alert, InlineSubmit, PageHeader, Section, TextField } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
import { ugs } from '../service';
import type { Schema } from '../types';

const COLUMNS: Array<Column<Schema>> = [
  { header: 'Id', cell: (schema) => schema.id },
  { header: 'Name', cell: (schema) => schema.name },
];

/** The workspace's schemas (the keys of a mapping): list and create. */
export function SchemasScreen() {
  const { announce } = useConsole();
  const schemas = useLoad(() => ugs.listSchemas(), []);
  const [name, setName] = useState('');
  const { errors, failure, busy, run } = useSubmit();
  const submit = async (event: Event) => {
    event.preventDefault();
    const schema = await run(() => ugs.createSchema({ name }), ['name']);
    if (!schema) return;
    setName('');
    announce(`Created schema ${schema.name} (id ${schema.id}).`);
    schemas.reload();
  };
  return (
    <>
      <PageHeader title="Schemas" />
      <Section title="Create a schema">
        {failure && <Alert>{failure}</Alert>}
        <form class="inline-form" onSubmit={(event) => void submit(event)}>
          <TextField label="Name" name="name" required value={name} error={errors.name} onValue={setName} />
          <InlineSubmit label="Create schema" busy={busy} />
        </form>
      </Section>
      <Section title="Schemas of this workspace">
        <Rows load={schemas} items={schemas.data?.items} what="schemas" empty="No schema yet.">
          {(rows) => (
            <DataTable caption="Schemas" columns={COLUMNS} rows={rows} rowKey={(schema) => schema.id} compact />
          )}
        </Rows>
      </Section>
    </>
  );
}
