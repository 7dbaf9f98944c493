/**
 * `--cors-origins` (UGS_CORS_ORIGINS): the web origins whose pages may call /api from the browser
 * (docs/api.md, "Cross-origin"). Comma-separated; empty (the default) grants no other origin.
 *
 * Each entry must be an origin exactly as a browser sends it in `Origin` — `scheme://host[:port]`,
 * lower case, no default port, no path, no trailing slash — because the grant compares strings: an
 * entry a browser never sends would silently grant nothing, so it is refused at start instead, with
 * the spelling that would work. No wildcard: an operator lists each origin (a pattern grants origins
 * nobody reviewed, such as any subdomain someone can take over).
 */
export function parseCorsOrigins(text: string): string[] {
  const origins = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const origin of origins) assertOrigin(origin);
  return [...new Set(origins)];
}

const EXAMPLE = 'e.g. https://app.example.com or http://localhost:3000';

function assertOrigin(entry: string): void {
  if (entry.includes('*')) throw new Error(`"${entry}": no wildcards; list each origin (${EXAMPLE})`);
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error(`"${entry}" is not an origin: scheme://host[:port] (${EXAMPLE})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`"${entry}" is not an http(s) origin (${EXAMPLE})`);
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '')
    throw new Error(`"${entry}" is not an origin: scheme://host[:port], no path, query or credentials (${EXAMPLE})`);
  if (entry !== url.origin) throw new Error(`"${entry}" is not written as a browser sends it in Origin: ${url.origin}`);
}
