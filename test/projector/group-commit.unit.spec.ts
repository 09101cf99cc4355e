import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BatchItem, BatchResult, PartitionRun } from '../../src/projector/batch.ts';
import { GroupCommit } from '../../src/projector/group-commit.ts';

/** A run of `events` placeholder items: the scheduler only counts them and reads the partition. */
const run = (partition: number, events = 1): PartitionRun => ({
  partition,
  expectedNextOffset: 0n,
  items: Array.from({ length: events }, () => ({}) as BatchItem),
});

const applied = (r: PartitionRun): BatchResult => ({
  ok: true,
  journal: [],
  duplicates: 0,
  nextOffset: BigInt(r.partition * 100 + r.items.length),
  refusedByDatabase: [],
});

/** A fold that records the partitions of each call and settles when the test says. */
function recordingFold() {
  const calls: { partitions: number[]; settle: (e?: Error) => void }[] = [];
  const fold = (runs: PartitionRun[]) =>
    new Promise<BatchResult[]>((resolve, reject) =>
      calls.push({
        partitions: runs.map((r) => r.partition),
        settle: (e) => (e ? reject(e) : resolve(runs.map(applied))),
      }),
    );
  return { calls, fold };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A GroupCommit over a recording fold, with `entered` eachBatch calls already under way. */
function scheduler(entered: number, options: Partial<{ maxEvents: number; lanes: number }> = {}) {
  const { calls, fold } = recordingFold();
  const gc = new GroupCommit(fold, { maxEvents: 100, lanes: 2, maxWaitMs: 20, ...options });
  for (let i = 0; i < entered; i++) gc.enter();
  return { calls, gc };
}

describe('GroupCommit: which runs are folded together, and when', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('folds once every partition being folded has handed in its run, all in one call', async () => {
    const { calls, gc } = scheduler(3);
    const results = [gc.submit(run(0)), gc.submit(run(1))];
    await flush();
    expect(calls).toEqual([]); // partition 2 is still decoding its batch
    results.push(gc.submit(run(2, 4)));
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1, 2]]);
    calls[0]!.settle();
    // Each caller gets its own run's result.
    expect((await Promise.all(results)).map((r) => r.ok && r.nextOffset)).toEqual([1n, 101n, 204n]);
  });

  it('a partition that ends without a run (nothing new, a seek) does not hold the others', async () => {
    const { calls, gc } = scheduler(2);
    void gc.submit(run(0));
    expect(calls).toEqual([]);
    gc.leave();
    expect(calls.map((c) => c.partitions)).toEqual([[0]]);
  });

  it('folds what it has after maxWaitMs when a partition is slow to hand in its run', async () => {
    const { calls, gc } = scheduler(2);
    void gc.submit(run(3));
    vi.advanceTimersByTime(19);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls.map((c) => c.partitions)).toEqual([[3]]);
  });

  it('folds at most maxEvents together (a larger run alone), and no more than `lanes` folds at once', async () => {
    const { calls, gc } = scheduler(4, { maxEvents: 5, lanes: 1 });
    const results = [gc.submit(run(0, 3)), gc.submit(run(1, 2)), gc.submit(run(2, 9)), gc.submit(run(3, 1))];
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1]]); // the 5 events reached maxEvents: no wait
    calls[0]!.settle();
    await flush();
    gc.leave(); // partitions 0 and 1 are done with their batches
    gc.leave();
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [2]]); // 9 events, over maxEvents: alone
    calls[1]!.settle();
    await flush();
    expect(calls).toHaveLength(2); // partition 2 may hand in its next run: it is still waited for
    gc.leave();
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [2], [3]]);
    calls[2]!.settle();
    expect(await Promise.all(results)).toHaveLength(4);
  });

  it("runs a second fold beside the first for other partitions; a partition's next run waits for its last", async () => {
    const { calls, gc } = scheduler(2);
    void gc.submit(run(0));
    void gc.submit(run(1));
    gc.enter(); // the next fetch's batches, while the first fold is in flight
    gc.enter();
    void gc.submit(run(0));
    void gc.submit(run(2));
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [2]]);
    vi.advanceTimersByTime(50);
    expect(calls).toHaveLength(2); // partition 0's second run never overtakes its first
    calls[0]!.settle();
    await flush();
    vi.advanceTimersByTime(20); // partitions 1 and 2 are still on their way out: the wait decides
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [2], [0]]);
  });

  it('sets no timer for runs that wait on their partition or a lane: the fold that ends takes them', async () => {
    const { calls, gc } = scheduler(1, { lanes: 1 });
    const first = gc.submit(run(0));
    expect(calls.map((c) => c.partitions)).toEqual([[0]]);
    gc.enter();
    const next = gc.submit(run(0)); // partition 0 is being folded: this run waits for it
    gc.enter();
    const other = gc.submit(run(1)); // another partition, but the one lane is busy
    expect(vi.getTimerCount()).toBe(0);
    calls[0]!.settle();
    await first;
    gc.leave(); // the first eachBatch call ends with its run
    expect(calls.map((c) => c.partitions)).toEqual([[0], [0, 1]]);
    calls[1]!.settle();
    expect((await Promise.all([next, other])).every((r) => r.ok)).toBe(true);
  });

  it('a failed fold is tried again run by run: a failure stays with its own partition', async () => {
    const { calls, gc } = scheduler(2);
    const a = gc.submit(run(0));
    const b = gc.submit(run(1));
    calls[0]!.settle(new Error('partition 1 cannot be folded'));
    await flush();
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [0]]); // one at a time
    calls[1]!.settle();
    await flush();
    expect(calls.map((c) => c.partitions)).toEqual([[0, 1], [0], [1]]);
    calls[2]!.settle(new Error('partition 1 cannot be folded'));
    expect((await a).ok).toBe(true);
    await expect(b).rejects.toThrow('partition 1 cannot be folded');
    // The next runs fold together again.
    void gc.submit(run(0));
    void gc.submit(run(1));
    expect(calls.map((c) => c.partitions).at(-1)).toEqual([0, 1]);
  });

  it('a run folded alone that fails is failed, with no second try', async () => {
    const { calls, gc } = scheduler(1);
    const a = gc.submit(run(4));
    calls[0]!.settle(new Error('connection terminated'));
    await expect(a).rejects.toThrow('connection terminated');
    expect(calls).toHaveLength(1);
  });
});
