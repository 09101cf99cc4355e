/**
 * Unit files that replace a module with vi.mock. The unit project shares one module graph per worker
 * (vitest.config.ts, isolate: false), where a replaced module would leak into the files after it; these run
 * in a project of their own, isolated. test/lint/unit-isolation.unit.spec.ts keeps the list whole.
 */
export const MOCKING_UNIT_FILES = ['test/ledger/csv.unit.spec.ts'];
