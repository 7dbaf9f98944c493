import { createRequire } from 'node:module';

/** The package's version: what `ugs --version` prints and /openapi.json states. */
export const { version: PACKAGE_VERSION } = createRequire(import.meta.url)('../../package.json') as { version: string };
