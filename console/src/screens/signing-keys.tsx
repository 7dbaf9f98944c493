import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm';
import { Alert, Badge, Loading, PageHeader, Section, Time } from '../components/ui';
import { useConsole, useLoad, useSubmit } from '../hooks';
import type { SigningKey } from '../types';

/** The workspace's embed-token signing keys: the published ones, and rotation. */
export function SigningKeysScreen() {
  const { announce } = useConsole();
  const keys = useLoad(() => api<{ signing_keys: SigningKey[] }>('GET', '/api/admin/signing_keys'), []);
  const [confirming, setConfirming] = useState(false);
  const rotation = useSubmit();
  const rotate = async () => {
    const done = await rotation.run(() => api<{ current: SigningKey }>('POST', '/api/admin/signing_keys/rotate'));
    setConfirming(false);
    if (done) {
      announce(`Key ${done.current.kid} signs from now on; the previous one stays published until its tokens have expired.`);
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
        {keys.error && <Alert>{keys.error.message}</Alert>}
        {!keys.data && !keys.error && <Loading what="signing keys" />}
        {keys.data && keys.data.signing_keys.length === 0 && <p class="muted">No key yet: the first is made when the first embed token is minted.</p>}
        {keys.data && keys.data.signing_keys.length > 0 && (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <caption class="visually-hidden">Signing keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key id (kid)</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">Retired</th>
                  <th scope="col">Published until</th>
                </tr>
              </thead>
              <tbody>
                {keys.data.signing_keys.map((key) => (
                  <tr key={key.kid}>
                    <td class="break">
                      <code>{key.kid}</code>
                    </td>
                    <td>{key.retired_at ? <Badge>retired</Badge> : <Badge tone="good">current</Badge>}</td>
                    <td>
                      <Time at={key.created_at} />
                    </td>
                    <td>
                      <Time at={key.retired_at} />
                    </td>
                    <td>{key.published_until ? <Time at={key.published_until} /> : <span class="muted">while current</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      {confirming && (
        <ConfirmDialog title="Rotate the signing key?" confirm="Rotate key" busy={rotation.busy} onConfirm={() => void rotate()} onCancel={() => setConfirming(false)}>
          <p>A new key signs embed tokens from now on, on every instance. The current key stays in the JWKS for a day, until every token it signed has expired.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
