export const DEFAULT_DATABASE_URL = 'sqlite:data/ugs.db';

export type DatabaseLocation = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

/** `sqlite:<path>` (relative to the working directory) or `postgres://…` / `postgresql://…`. */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('The SQLite database URL needs a file path, e.g. sqlite:data/ugs.db.');
    return { engine: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { engine: 'postgres', url };
  throw new Error(`Unsupported database URL "${url}": use sqlite:<path> or postgres://…`);
}
