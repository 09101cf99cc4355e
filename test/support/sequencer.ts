import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest, started first: the workers then end together instead of one
 * running a long file alone at the end. Without a results cache (every fresh clone, so every CI run) vitest
 * starts the largest files first, and several of the longest are small files that wait (a broker restarted,
 * a registry started afresh, processes started and stopped). test/lint/sequencer.unit.spec.ts keeps every
 * name here a file that exists.
 */
export const LONGEST_FIRST = [
  'test/console/console.e2e.spec.ts',
  'test/projector/projector.int.spec.ts',
  'test/projector/kafka-outage.int.spec.ts',
  'test/supervisor/worker-start-stop.int.spec.ts',
  'test/foundation/stack.int.spec.ts',
  'test/reconciler/worker.int.spec.ts',
  'test/cases/cases.int.spec.ts',
  'test/ops/replay-guards.int.spec.ts',
  'test/outbox/kafka-down.int.spec.ts',
  'test/projector/stop.int.spec.ts',
];

/** Vitest's order, but within a project the files of LONGEST_FIRST first, in its order. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects: string[] = [];
    for (const f of sorted) if (!projects.includes(f.project.name)) projects.push(f.project.name);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, key: [projects.indexOf(f.project.name), rank(f), i] as const }))
      .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2])
      .map(({ f }) => f);
  }
}
