import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const CROSSES_LAYERS = 'This import crosses the layers (docs/architecture.md).';

/**
 * Files matching `files` may not import from the folders in `forbidden`; from the modules in
 * `typesOnly` they may import types only (erased from the JavaScript, so no layer is loaded).
 */
const layer = (files, forbidden, typesOnly = []) => [
  {
    files: [files],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: [...forbidden, ...typesOnly.map((path) => `!${path}`)], message: CROSSES_LAYERS },
            ...(typesOnly.length === 0
              ? []
              : [{ group: typesOnly, allowTypeImports: true, message: `${CROSSES_LAYERS} Types only.` }]),
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  { ignores: ['**/dist/', 'node_modules/', 'coverage/', 'bench/results/', 'release/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  // The layers (docs/architecture.md): a request flows http -> domain -> store; the CLI and the
  // webhook worker call the domain; the wire format sits beside http and never below the domain,
  // except its leaf of contract constants, which every layer reads. The domain owns its ports and
  // records (src/domain/<resource>/*.port.ts, *.records.ts): it imports nothing of the store. An access
  // rule's shape is defined once, by its schemas, whose types the domain takes (access-rule.records.ts).
  ...layer(
    'src/domain/**',
    ['**/http/**', '**/wire/**', '!**/wire/contract.constants.js', '**/cli/**', '**/webhooks/**', '**/store/**'],
    ['**/wire/access-rules.schemas.js'],
  ),
  ...layer('src/store/**', [
    '**/http/**',
    '**/wire/**',
    '!**/wire/contract.constants.js',
    '**/cli/**',
    '**/webhooks/**',
  ]),
  ...layer('src/wire/**', ['**/http/**', '**/cli/**', '**/store/**', '**/webhooks/**']),
  // The schemas are built into @ugs/client (packages/client), which holds none of the server: they
  // import each other, the leaf of constants and typebox, nothing else.
  ...layer('src/wire/{*.schemas.ts,contract.constants.ts,envelope.ts}', [
    '**/domain/**',
    '**/http/**',
    '**/cli/**',
    '**/store/**',
    '**/webhooks/**',
    '**/cursor.js',
    '**/request-errors.js',
    '**/validation-errors.js',
    '**/*.presenter.js',
  ]),
  // One error catalogue (docs/architecture.md): every AppError is made by a constructor of
  // src/domain/errors.ts (`failure.*`) or src/wire/request-errors.ts (`requestFailure.*`), where its
  // code, message and field are read together.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/domain/errors.ts', 'src/wire/request-errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='AppError']",
          message:
            'Make the error in the catalogue (failure.* in src/domain/errors.ts, requestFailure.* in src/wire/request-errors.ts) and call it here.',
        },
      ],
    },
  },
  ...layer('src/cli/**', ['**/http/**']),
  ...layer('src/webhooks/**', ['**/http/**', '**/cli/**']),
  // The console's front end runs in the browser and reaches the service through the client library
  // (`@ugs/client`, its types included) and nothing else of the repository's sources.
  {
    files: ['console/src/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/**', '**/packages/**', 'node:*'],
              message: 'The console reaches the service through @ugs/client only (docs/architecture.md).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bin/**/*.js', 'scripts/**/*.js', 'bench/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
