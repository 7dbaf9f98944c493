import { useState } from 'preact/hooks';
import { useSubmit } from '../hooks';
import { ugs } from '../service';
import type { MintedEmbedToken, MintEmbedTokenBody } from '../types';
import { Alert, Json, TextArea, TextField, Time } from './ui';

/** A compact JWS's header and claims, as any JWT debugger shows them (the signature is the renderer's to check). */
function decoded(jws: string): { header: unknown; claims: unknown } {
  const part = (text: string) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  };
  const [header = '', claims = ''] = jws.split('.');
  return { header: part(header), claims: part(claims) };
}

const EMBED_FIELDS = ['expires_in', 'embed_id', 'origin', 'properties'] as const;

/** Mint an embed token for the group (POST /api/user/embed_token) and show what it says. */
export function EmbedTokenPanel({ userGroupId }: { userGroupId: string }) {
  const [draft, setDraft] = useState({ embedId: '', origin: '', expiresIn: '3600', properties: '' });
  const [minted, setMinted] = useState<MintedEmbedToken | null>(null);
  const { errors, failure, busy, run, setErrors } = useSubmit();
  const mint = async (event: Event) => {
    event.preventDefault();
    let properties: unknown;
    try {
      properties = draft.properties.trim() === '' ? undefined : JSON.parse(draft.properties);
    } catch {
      setErrors({ properties: 'This is not valid JSON.' });
      return;
    }
    const body = {
      user_group_id: userGroupId,
      expires_in: Number(draft.expiresIn),
      ...(draft.embedId ? { embed_id: draft.embedId } : {}),
      ...(draft.origin ? { origin: draft.origin } : {}),
      ...(properties === undefined ? {} : { properties }),
    };
    const result = await run(() => ugs.mintEmbedToken(body as MintEmbedTokenBody), EMBED_FIELDS);
    if (result) setMinted(result);
  };
  const view = minted && decoded(minted.embed_token);
  return (
    <>
      {failure && <Alert>{failure}</Alert>}
      <form class="form-grid" onSubmit={(event) => void mint(event)}>
        <TextField
          label="Embed id"
          name="embed_id"
          hint="The dashboard it is for (its aud); empty for ugs-embed."
          value={draft.embedId}
          error={errors.embed_id}
          onValue={(embedId) => setDraft({ ...draft, embedId })}
        />
        <TextField
          label="Origin"
          name="origin"
          hint="e.g. https://app.example.com"
          value={draft.origin}
          error={errors.origin}
          onValue={(origin) => setDraft({ ...draft, origin })}
        />
        <TextField
          label="Lifetime (seconds)"
          name="expires_in"
          type="number"
          min={60}
          max={86400}
          value={draft.expiresIn}
          error={errors.expires_in}
          onValue={(expiresIn) => setDraft({ ...draft, expiresIn })}
        />
        <TextArea
          label="Properties for this view"
          hint="Optional JSON object, merged over the computed properties."
          rows={3}
          value={draft.properties}
          error={errors.properties}
          onValue={(properties) => setDraft({ ...draft, properties })}
        />
        <div>
          <button type="submit" disabled={busy}>
            Mint embed token
          </button>
        </div>
      </form>
      {minted && view && (
        <div class="minted" aria-live="polite">
          <p>
            Expires <Time at={minted.expires_at} />.
          </p>
          <code class="secret-value" data-testid="embed-token">
            {minted.embed_token}
          </code>
          <div class="two-columns">
            <div>
              <h3>Header</h3>
              <Json label="Embed token header" value={view.header} />
            </div>
            <div>
              <h3>Claims</h3>
              <Json label="Embed token claims" value={view.claims} />
            </div>
          </div>
        </div>
      )}
    </>
  );
}
