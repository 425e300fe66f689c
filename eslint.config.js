// One flat config for the whole repo: TypeScript everywhere, React hooks rules for the web app.
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'web/src/sim/pkg/**',
      'web/src/sim/generated/**',
      'sim-wasm/**',
      'scenarios/**',
      'test-results/**',
      'playwright-report/**',
      'e2e/test-results/**',
      'e2e/playwright-report/**',
      'python/.venv/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['web/src/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['web/src/sim/worker.ts'],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    files: ['scripts/**/*.mjs', 'e2e/**/*.ts', '*.js', 'web/*.ts', '**/*.test.ts'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
