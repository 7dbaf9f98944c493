import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../components/confirm';
import { DataTable, Rows, type Column } from '../components/data-table';
import { Alert, Badge, PageHeader, Section, Time } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
import { ugs } from '../service';
import type { SigningKey } from '../types';

const COLUMNS: Array<Column<SigningKey>> = [
  { header: 'Key id (kid)', class: 'break', cell: (key) => <code>{key.kid}</code> },
  { header: 'State', cell: (key) => (key.retired_at ? <Badge>retired</Badge> : <Badge tone="good">current</Badge>) },
  { header: 'Created', cell: (key) => <Time at={key.created_at} /> },
  { header: 'Retired', cell: (key) => <Time at={key.retired_at} /> },
  {
    header: 'Published until',
    cell: (key) => (key.published_until ? <Time at={key.published_until} /> : <span class="muted">while current</span>),
  },
];

/** The workspace's embed-token signing keys: the published ones, and rotation. */
export function SigningKeysScreen() {
  const { announce } = useConsole();
  const keys = useLoad(() => ugs.listSigningKeys(), []);
  const [confirming, setConfirming] = useState(false);
  const rotation = useSubmit();
  const rotate = async () => {
    const done = await rotation.run(() => ugs.rotateSigningKey());
    setConfirming(false);
    if (done) {
      announce(
        `Key ${done.current.kid} signs from now on; the previous one stays published until its tokens have expired.`,
      );
      keys.reload();
    }
  };
  return (
    <>
      <PageHeader title="Signing keys">
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Rotate signing key
        </button>
      </PageHeader>
      <Section title="Published keys (newest first)">
        {rotation.failure && <Alert>{rotation.failure}</Alert>}
        <Rows
          load={keys}
          items={keys.data?.items}
          what="signing keys"
          empty="No key yet: the first is made when the first embed token is minted."
        >
          {(rows) => <DataTable caption="Signing keys" columns={COLUMNS} rows={rows} rowKey={(key) => key.kid} />}
        </Rows>
      </Section>
      {confirming && (
        <ConfirmDialog
          title="Rotate the signing key?"
          confirm="Rotate key"
          busy={rotation.busy}
          onConfirm={() => void rotate()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            A new key signs embed tokens from now on, on every instance. The current key stays in the JWKS for a day,
            until every token it signed has expired.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
