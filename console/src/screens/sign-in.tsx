import { useEffect, useState } from 'preact/hooks';
import { Alert, TextField } from '../components/ui';
import { useSubmit } from '../hooks';
import { signInMethods, ugs } from '../service';
import type { SessionInfo } from '../main';

/**
 * Sign in through the company's identity provider (when the server has one), or with an admin API
 * token (unless switched off). The token goes to POST /console/session once and is then forgotten:
 * the page keeps only the session's CSRF token, the browser the HttpOnly session cookie.
 */
export function SignInScreen({ onSignedIn }: { onSignedIn(session: SessionInfo): void }) {
  const [token, setToken] = useState('');
  const [methods, setMethods] = useState<{ api_token: boolean; identity_provider: boolean } | null>(null);
  const { errors, failure, busy, run } = useSubmit();
  useEffect(() => {
    document.title = 'Sign in · User Group Service console';
    signInMethods().then(setMethods, () => setMethods({ api_token: true, identity_provider: false }));
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const session = await run(() => ugs.createConsoleSession(token.trim()), ['api_token']);
    setToken('');
    if (session) onSignedIn(session);
  };
  // Back to the page the person was on, once the provider has signed them in.
  const returnTo = encodeURIComponent(location.pathname + location.search);
  return (
    <main class="sign-in" id="main">
      <div class="card sign-in-card">
        <h1>User Group Service console</h1>
        {methods?.identity_provider && (
          <>
            <p class="muted">Sign in with your company account; your groups there decide what you may do here.</p>
            <a class="button" href={`/console/oidc/login?return_to=${returnTo}`}>
              Sign in with your identity provider
            </a>
          </>
        )}
        {methods?.api_token && (
          <>
            <p class="muted">
              {methods.identity_provider ? 'Or sign in' : 'Sign in'} with an admin API token of this workspace. The
              token is exchanged for a session and is not kept in the browser.
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
          </>
        )}
        <p class="hint">A session ends after an hour without use, and after eight hours in any case.</p>
      </div>
    </main>
  );
}
