/*
 * The console's one way to the service: @ugs/client in its console-session mode. The browser sends
 * the HttpOnly session cookie (which no script can read); the client sends the session's CSRF token,
 * which it keeps from the session's answers. The API token the operator signed in with is never kept.
 */
import { createClient } from '@ugs/client';

export { UgsError } from '@ugs/client';

let onSignedOut: () => void = () => undefined;

/** `signedOut` runs whenever the service says the session has ended (any 401). */
export function whenSignedOut(signedOut: () => void): void {
  onSignedOut = signedOut;
}

export const ugs = createClient({
  baseUrl: location.origin,
  consoleSession: true,
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 401) onSignedOut();
    return response;
  },
});

/** A filter field left empty is no filter (the API refuses an empty value). */
export const given = <T extends string>(value: T | ''): T | undefined => (value === '' ? undefined : value);

/** The ways in this server offers, for the sign-in page (GET /console/sign-in says). */
export async function signInMethods(): Promise<{ api_token: boolean; identity_provider: boolean }> {
  const response = await fetch(`${location.origin}/console/sign-in`, { credentials: 'same-origin', cache: 'no-store' });
  const answer = (await response.json().catch(() => ({}))) as {
    sign_in?: { api_token: boolean; identity_provider: boolean };
  };
  return answer.sign_in ?? { api_token: true, identity_provider: false };
}
