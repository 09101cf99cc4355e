import { defineConfig } from 'vitest/config';

// Two levels: unit tests need nothing; integration and end-to-end tests share one global setup that
// provides a real Kafka, schema registry and Postgres, and an isolated database and topic prefix per run.
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.unit.spec.ts'],
          // Unit tests first: they are quick and need nothing, so a broken build fails fast.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'int',
          sequence: { groupOrder: 1 },
          include: ['test/**/*.int.spec.ts', 'test/**/*.e2e.spec.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          pool: 'forks',
          maxWorkers: 2,
        },
      },
    ],
  },
});
