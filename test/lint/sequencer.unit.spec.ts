import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONGEST_FIRST } from '../support/sequencer.ts';

describe('the integration files started first', () => {
  it('names only files that exist, each once, each an integration or end-to-end file', () => {
    expect(LONGEST_FIRST.filter((f) => !existsSync(f))).toEqual([]);
    expect(new Set(LONGEST_FIRST).size).toBe(LONGEST_FIRST.length);
    expect(LONGEST_FIRST.filter((f) => !/\.(int|e2e)\.spec\.ts$/.test(f))).toEqual([]);
  });
});
