import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '@ugs/client';
import { Console, type ConsoleContext, type Environment } from './hooks';
import { BASE, match, navigate, useLocation } from './router';
import { ApiTokensScreen } from './screens/api-tokens';
import { AuditScreen } from './screens/audit';
import { DataSourcesScreen } from './screens/data-sources';
import { GroupScreen } from './screens/group';
import { GroupsScreen } from './screens/groups';
import { NewGroupScreen } from './screens/new-group';
import { PeopleSessionsScreen } from './screens/people-sessions';
import { SchemasScreen } from './screens/schemas';
import { SignInScreen } from './screens/sign-in';
import { SigningKeysScreen } from './screens/signing-keys';
import { StatusScreen } from './screens/status';
import { SyncScreen } from './screens/sync';
import { ugs, whenSignedOut } from './service';
import { WebhooksScreen } from './screens/webhooks';
import { UsageScreen } from './screens/usage';
import './styles.css';

export type SessionInfo = ConsoleSession;

const NAVIGATION = [
  ['/groups', 'User groups'],
  ['/sync', 'Sync'],
  ['/api-tokens', 'API tokens'],
  ['/people-sessions', "People's sessions"],
  ['/schemas', 'Schemas'],
  ['/data-sources', 'Data sources'],
  ['/webhooks', 'Webhooks'],
  ['/audit', 'Audit trail'],
  ['/usage', 'Usage'],
  ['/signing-keys', 'Signing keys'],
  ['/status', 'Status'],
] as const;

function Screen({ path }: { path: string }) {
  let params: Record<string, string> | null;
  if (path === '/groups') return <GroupsScreen />;
  if (path === '/groups/new') return <NewGroupScreen />;
  if ((params = match('/groups/:teamId', path))) return <GroupScreen teamId={Number(params.teamId)} />;
  if (path === '/sync') return <SyncScreen />;
  if (path === '/api-tokens') return <ApiTokensScreen />;
  if (path === '/people-sessions') return <PeopleSessionsScreen />;
  if (path === '/schemas') return <SchemasScreen />;
  if (path === '/data-sources') return <DataSourcesScreen />;
  if (path === '/webhooks') return <WebhooksScreen />;
  if (path === '/audit') return <AuditScreen />;
  if (path === '/usage') return <UsageScreen />;
  if (path === '/signing-keys') return <SigningKeysScreen />;
  if (path === '/status') return <StatusScreen />;
  return (
    <div class="card">
      <h1>Not found</h1>
      <p>
        There is no console page at <code>{BASE + path}</code>. <a href={`${BASE}/groups`}>Go to the user groups.</a>
      </p>
    </div>
  );
}

function Shell({ session, onSignOut }: { session: SessionInfo; onSignOut(): void }) {
  const { path } = useLocation();
  const [environment, setEnvironment] = useState<Environment>(session.environment);
  // A message belongs to the page it was made on (after a navigation: the new one), and goes with it.
  const [message, setMessage] = useState({ text: '', path: '' });
  useEffect(() => {
    if (path === '/') navigate('/groups', { replace: true });
  }, [path]);
  const announce = (text: string) => setMessage({ text, path: location.pathname });
  const who = session.person ? (session.person.email ?? session.person.sub) : (session.api_token?.name ?? '');
  const token = { id: session.api_token?.id ?? 0, name: who, environment: session.environment, scope: session.scope };
  const context: ConsoleContext = { token, environment, setEnvironment, announce };
  const signOut = async () => {
    const { logoutUrl } = await ugs.deleteConsoleSession().catch(() => ({ logoutUrl: undefined }));
    // A person signed in through the identity provider is signed out there too, when it offers that.
    if (logoutUrl) location.assign(logoutUrl);
    else onSignOut();
  };
  return (
    <Console.Provider value={context}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={`${BASE}/groups`}>
          <img src={`${BASE}/favicon.svg`} alt="" width={24} height={24} />
          User Group Service
        </a>
        <div class="topbar-controls">
          <label class="inline-label">
            Environment
            <select value={environment} onChange={(event) => setEnvironment(event.currentTarget.value as Environment)}>
              <option value="Customer">Customer</option>
              <option value="Testing">Testing</option>
            </select>
          </label>
          <span class="who" title={session.person ? session.person.issuer : `API token ${token.id}`}>
            Signed in as <strong>{who}</strong>{' '}
            <span class="muted">
              ({session.environment}, {session.scope})
            </span>
          </span>
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <div class="layout">
        <nav class="sidebar" aria-label="Console">
          <ul>
            {NAVIGATION.map(([href, label]) => {
              const current = path === href || path.startsWith(`${href}/`);
              return (
                <li key={href}>
                  <a href={BASE + href} aria-current={current ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <div class="announcer" role="status" aria-live="polite">
            {message.text && message.path === location.pathname && (
              <div class="alert alert-success">
                <span>{message.text}</span>
                <button type="button" class="link" aria-label="Dismiss" onClick={() => announce('')}>
                  ×
                </button>
              </div>
            )}
          </div>
          <Screen path={path} />
        </main>
      </div>
    </Console.Provider>
  );
}

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const signedOut = () => setSession(null);
  useEffect(() => {
    whenSignedOut(signedOut);
    // No session is an answer (null), not an error: the sign-in page logs nothing.
    ugs.getConsoleSession().then(setSession, signedOut);
  }, []);
  if (session === undefined) return <p class="muted center">Loading…</p>;
  if (session === null) return <SignInScreen onSignedIn={setSession} />;
  return <Shell session={session} onSignOut={signedOut} />;
}

render(<App />, document.getElementById('app')!);
