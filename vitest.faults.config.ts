import { defineConfig } from 'vitest/config';

// `npm run test:faults`: infrastructure faults under load with real processes, on a three-broker cluster
// the setup starts (and stops) beside the default stack. Not part of `npm test`: they restart shared
// services (Postgres above all), so they run on their own, one file at a time, each scenario bounded.
export default defineConfig({
  test: {
    name: 'faults',
    include: ['test/faults/**/*.faults.spec.ts'],
    globalSetup: ['test/faults/setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 240_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
