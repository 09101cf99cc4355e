import { describe, expect, it } from 'vitest';
import { splitPartitions } from '../../src/ops/replay.ts';

describe('splitPartitions: the partitions a rebuild deals to its workers', () => {
  const ends = new Map<number, bigint>([
    [0, 10n],
    [1, 0n],
    [2, 5n],
    [3, 7n],
    [4, 1n],
  ]);

  it('deals the partitions with something to fold round robin, each exactly once, with its end', () => {
    const parts = splitPartitions(ends, 2);
    expect(parts.map((p) => [...p])).toEqual([
      [
        [0, 10n],
        [3, 7n],
      ],
      [
        [2, 5n],
        [4, 1n],
      ],
    ]);
  });

  it('never makes more parts than partitions to fold, and one part when there is nothing to fold', () => {
    expect(splitPartitions(ends, 16)).toHaveLength(4);
    expect(splitPartitions(new Map([[0, 0n]]), 4).map((p) => p.size)).toEqual([0]);
    expect(splitPartitions(ends, 1).map((p) => p.size)).toEqual([4]);
  });
});
