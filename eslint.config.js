import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'packages/*/dist/', 'coverage/', 'build/', '.bench-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The web console's browser modules (console/): plain JavaScript run by the browser.
    files: ['console/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'sessionStorage', 'fetch', 'atob', 'btoa', 'TextEncoder', 'TextDecoder', 'Node', 'performance', 'confirm', 'setInterval', 'clearInterval'].map((g) => [g, 'readonly']),
      ),
    },
  },
);
