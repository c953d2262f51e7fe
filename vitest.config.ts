import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/**
 * Two tiers. `unit`: pure rules (`*.unit.test.ts`), no database, milliseconds each. `http`: behaviour through
 * the HTTP API on a real database (PGlite by default, PostgreSQL with TEST_DATABASE_URL), one template
 * database migrated once by the global setup and cloned per file. `web`: the web UI's component and logic tests
 * (happy-dom). `e2e`: the web UI in Debian's Chromium against the real service on the embedded database.
 */
export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['server/**/*.unit.test.ts', 'cli/**/*.unit.test.ts'],
          pool: 'threads',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'http',
          include: ['server/**/*.test.ts', 'cli/**/*.test.ts'],
          exclude: ['**/*.unit.test.ts', '**/node_modules/**'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          include: ['web/src/**/*.test.{ts,tsx}'],
          environment: 'happy-dom',
          setupFiles: ['web/src/test-setup.ts'],
          pool: 'threads',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['web/e2e/**/*.e2e.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          pool: 'forks',
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
