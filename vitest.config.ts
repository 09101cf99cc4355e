import { defineConfig } from 'vitest/config';
import { MOCKING_UNIT_FILES } from './test/support/mocking.ts';
import { LongestFirstSequencer } from './test/support/sequencer.ts';

// Two levels: unit tests need nothing; integration and end-to-end tests share one global setup that
// provides a real Kafka, schema registry and Postgres, and an isolated database and topic prefix per run.
/** Unit files that replace a module with vi.mock: each needs its own module graph. */
const MOCKING = MOCKING_UNIT_FILES;

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.unit.spec.ts'],
          exclude: MOCKING,
          // Pure logic shares one module graph: importing the sources once per worker, not once per file,
          // halves the project's time. A file that replaces a module (vi.mock) runs isolated, below.
          isolate: false,
          // One group with the integration files, on one pool of three workers: the integration files start at
          // once (the longest first) and the unit files fill the workers after them, where a unit phase of its
          // own kept every integration file waiting (vitest needs one worker count for projects of one group).
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'unit-mocking', include: MOCKING, maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'int',
          sequence: { groupOrder: 0 },
          include: ['test/**/*.int.spec.ts', 'test/**/*.e2e.spec.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          pool: 'forks',
          // The files share one module graph per worker (each has its own schema, topic and subjects, and a
          // file that sets process.env restores it): the sources load once per worker, not once per file.
          isolate: false,
          // Three workers on two cores: a third overlaps the files that wait on the broker or a process.
          maxWorkers: 3,
        },
      },
    ],
  },
});
