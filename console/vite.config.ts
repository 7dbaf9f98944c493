import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The admin console's front end, built by `npm run build` into dist/console, which the service
// serves at /console (src/http/console). Everything it needs is in the bundle: no asset from
// another origin, no inline script or style (the pages' Content-Security-Policy forbids both).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Every asset a file of its own: a data: URI would need the CSP to allow data:.
    assetsInlineLimit: 0,
    // Chromium, Firefox and Safari all preload modules natively; the polyfill would be dead weight.
    modulePreload: { polyfill: false },
  },
});
