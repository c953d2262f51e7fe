import { defineConfig } from 'vitest/config';

/**
 * Two tiers. `unit`: pure rules (`*.unit.test.ts`), no database, milliseconds each. `http`: behaviour through
 * the HTTP API on a real database (PGlite by default, PostgreSQL with TEST_DATABASE_URL), one template
 * database migrated once by the global setup and cloned per file.
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
          include: ['server/**/*.test.ts'],
          exclude: ['**/*.unit.test.ts', '**/node_modules/**'],
          globalSetup: ['server/test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          pool: 'forks',
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
