import { createRequire } from 'node:module';

/** The package's version: what `ugs --version` prints and /healthz reports. */
export const { version: PACKAGE_VERSION } = createRequire(import.meta.url)('../../package.json') as { version: string };
