// Lint for the whole front end: the TypeScript sources (dashboard, loader, pixel, shared) and the
// Node scripts that build, test and measure them. React's hook rules are errors: a hook called
// conditionally, or an effect missing an input, is a bug that shows only at run time.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'dashboard/api-schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['dashboard/**/*.{ts,tsx}', 'loader/**/*.ts', 'pixel/**/*.ts', 'shared/**/*.ts'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['dashboard/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      // `useLoad` takes its inputs the way `useEffect` does, so each call's list is checked too.
      'react-hooks/exhaustive-deps': ['error', { additionalHooks: '^useLoad$' }],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'test/**/*.mjs', 'e2e/**/*.mjs', 'bench/**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    rules: {
      // A name starting with an underscore is unused on purpose (a parameter kept for its position).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
);
