// One lint configuration: ESLint's and typescript-eslint's recommended rules; formatting is Prettier's
// (`npm run format`), import cycles are refused by dpdm and the seams between areas by scripts/check-seams.ts
// (all three run in `npm run lint`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.tmp/**', 'data/**', 'web/dist/**', 'cli/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx', 'server/start.js', 'server/files-key.js', 'cli/**/*.js', 'web/build.js'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-control-regex': 'off',
      // TypeBox is the `typebox` package (1.x, the one @fastify/type-provider-typebox builds on); its 0.x
      // predecessor would be a second, incompatible schema builder.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@sinclair/typebox', '@sinclair/typebox/*'],
              message: "Import from 'typebox' (TypeBox 1.x), the package the Fastify type provider uses.",
            },
          ],
        },
      ],
    },
  },
  // Every model call goes through the model gateway (server/src/modules/models): only it, the composition root
  // that builds the provider (deps.ts) and the providers themselves import the LLM providers.
  {
    files: ['server/src/**/*.ts'],
    ignores: ['server/src/modules/models/**', 'server/src/providers/**', 'server/src/deps.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@sinclair/typebox', '@sinclair/typebox/*'],
              message: "Import from 'typebox' (TypeBox 1.x), the package the Fastify type provider uses.",
            },
            {
              group: ['**/providers/llm', '**/providers/llm/*'],
              message:
                'Model calls go through the model gateway (modules/models/model-gateway.ts: complete, billing, the message types).',
            },
            {
              group: ['@anthropic-ai/sdk', '@anthropic-ai/sdk/*', 'openai', 'openai/*'],
              message: 'Only the LLM providers (server/src/providers/llm) speak to the vendors.',
            },
          ],
        },
      ],
    },
  },
  // The web UI runs in the browser.
  { files: ['web/src/**/*.{ts,tsx}'], languageOptions: { globals: { ...globals.browser } } },
  prettier,
);
