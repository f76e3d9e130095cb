import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Type tests (*.test-d.ts) are checked by tsc, not run.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // The console's page runs in the browser: the end-to-end tests drive it in Chromium.
      exclude: ['src/generated/**', 'src/console/app/**'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: { lines: 90, branches: 85, functions: 90, statements: 90 },
    },
  },
});
