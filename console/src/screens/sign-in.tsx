import { useEffect, useState } from 'preact/hooks';
import { Alert, TextField } from '../components/ui';
import { useSubmit } from '../hooks';
import { ugs } from '../service';
import type { SessionInfo } from '../main';

/**
 * Sign in with an admin API token. The token goes to POST /console/session once and is then
 * forgotten: the page keeps only the session's CSRF token, the browser the HttpOnly session cookie.
 */
export function SignInScreen({ onSignedIn }: { onSignedIn(session: SessionInfo): void }) {
  const [token, setToken] = useState('');
  const { errors, failure, busy, run } = useSubmit();
  useEffect(() => {
    document.title = 'Sign in · User Group Service console';
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const session = await run(() => ugs.createConsoleSession(token.trim()), ['api_token']);
    setToken('');
    if (session) onSignedIn(session);
  };
  return (
    <main class="sign-in" id="main">
      <div class="card sign-in-card">
        <h1>User Group Service console</h1>
        <p class="muted">
          Sign in with an admin API token of this workspace. The token is exchanged for a session and is not kept in the
          browser.
        </p>
        {failure && <Alert>{failure}</Alert>}
        <form onSubmit={(event) => void submit(event)}>
          <TextField
            label="Admin API token"
            type="password"
            name="api_token"
            autoComplete="off"
            required
            placeholder="ugs_live_…"
            error={errors.api_token}
            value={token}
            onValue={setToken}
          />
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="hint">A session ends after an hour without use, and after eight hours in any case.</p>
      </div>
    </main>
  );
}
