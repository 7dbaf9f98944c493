import { useEffect, useState } from 'preact/hooks';

/*
 * The console's pages are paths under /console (the service answers every one with the same page);
 * this is the little client-side router that picks the screen: the History API, and links that
 * stay plain <a href> elements so that the keyboard, middle click and "open in new tab" work.
 */

export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());
window.addEventListener('popstate', notify);

export function navigate(path: string, { replace = false } = {}): void {
  const url = path.startsWith(BASE) ? path : `${BASE}${path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  notify();
}

/** The current path below /console (`/groups/7`) and its query; re-renders on every navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  const path = location.pathname.slice(BASE.length).replace(/\/+$/, '') || '/';
  return { path, query: new URLSearchParams(location.search) };
}

/** Clicks on same-origin console links navigate in the page, unless a modifier asks for a new tab. */
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  const link = (event.target as Element | null)?.closest?.('a');
  if (!link || link.target || link.origin !== location.origin || !link.pathname.startsWith(BASE)) return;
  // The identity provider's sign-in is the server's, not one of the page's views: the browser goes there.
  if (link.pathname.startsWith(`${BASE}/oidc/`)) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});

/** Matches `/groups/:id` against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const source = pattern.replace(/:([a-z]+)/gi, (_whole, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const found = new RegExp(`^${source}$`).exec(path);
  if (!found) return null;
  // A malformed escape (`%E0%A4%A`) names no page: the not-found view, not an exception (a blank page).
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1]!)]));
  } catch {
    return null;
  }
}
