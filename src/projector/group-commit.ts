import type { BatchResult, PartitionRun } from './batch.ts';

interface Pending {
  run: PartitionRun;
  resolve: (result: BatchResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Gathers the runs of the partitions being folded at once and folds them together (projectBatches).
 * kafkajs hands a fetch's partitions to eachBatch side by side; a fold starts once each of them has handed
 * in its run or finished, or `maxWaitMs` after a run came to an empty queue, whichever is first, so a partition
 * slow to hand in (a dead letter being published) never holds the others back for long. At most `lanes`
 * folds run at once, each of at most `maxEvents` events (one run may exceed it alone: it is never split).
 * A fold that fails is tried again one run at a time, so each partition gets its own result or error.
 */
export class GroupCommit {
  /** eachBatch calls between enter() and leave(). */
  private active = 0;
  /** Of those, the ones whose run is pending or being folded. */
  private handedIn = 0;
  private pending: Pending[] = [];
  private folding = 0;
  /** Partitions whose run is being folded: a partition's next run waits for the one before. */
  private readonly inFlight = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fold: (runs: PartitionRun[]) => Promise<BatchResult[]>,
    private readonly options: { maxEvents: number; lanes: number; maxWaitMs: number },
  ) {}

  enter(): void {
    this.active++;
  }

  leave(): void {
    this.active--;
    this.maybeFold();
  }

  /** Folds the run with others of its moment; the caller must be between enter() and leave(). */
  submit(run: PartitionRun): Promise<BatchResult> {
    return new Promise<BatchResult>((resolve, reject) => {
      this.pending.push({ run, resolve, reject });
      this.handedIn++;
      this.maybeFold();
    });
  }

  private maybeFold(waitedLongEnough = false): void {
    while (
      this.pending.length > 0 &&
      this.folding < this.options.lanes &&
      (waitedLongEnough || this.active === this.handedIn || this.pendingEvents() >= this.options.maxEvents)
    ) {
      const taken = this.take();
      if (taken.length === 0) break; // every pending run's partition is being folded
      void this.foldSome(taken);
    }
    // The wait is for runs a fold could take now. Runs whose partition is being folded, or that wait for
    // a lane, are taken when a fold ends (foldSome calls back): a timer for them only woke to find none.
    const takeable =
      this.folding < this.options.lanes && this.pending.some((p) => !this.inFlight.has(p.run.partition));
    if (!takeable && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    } else if (takeable && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.maybeFold(true);
      }, this.options.maxWaitMs).unref();
    }
  }

  private pendingEvents(): number {
    let n = 0;
    for (const p of this.pending) n += p.run.items.length;
    return n;
  }

  /** The oldest runs up to maxEvents, one per partition (a partition's next run waits for the one before). */
  private take(): Pending[] {
    const taken: Pending[] = [];
    const partitions = new Set<number>();
    let events = 0;
    this.pending = this.pending.filter((p) => {
      const fits = taken.length === 0 || events + p.run.items.length <= this.options.maxEvents;
      if (!fits || partitions.has(p.run.partition) || this.inFlight.has(p.run.partition)) return true;
      taken.push(p);
      partitions.add(p.run.partition);
      events += p.run.items.length;
      return false;
    });
    return taken;
  }

  private async foldSome(taken: Pending[]): Promise<void> {
    this.folding++;
    for (const p of taken) this.inFlight.add(p.run.partition);
    const settled: (() => void)[] = [];
    try {
      const results = await this.fold(taken.map((p) => p.run));
      taken.forEach((p, i) => settled.push(() => p.resolve(results[i]!)));
    } catch (e) {
      if (taken.length === 1) settled.push(() => taken[0]!.reject(e));
      // Each run again on its own: a failure that is one partition's (its data, not the connection) must
      // hold back that partition alone, not every partition that happened to be folded with it.
      else
        for (const p of taken) {
          try {
            const [result] = await this.fold([p.run]);
            settled.push(() => p.resolve(result!));
          } catch (err) {
            settled.push(() => p.reject(err));
          }
        }
    } finally {
      this.handedIn -= taken.length;
      for (const p of taken) this.inFlight.delete(p.run.partition);
      for (const settle of settled) settle();
      this.folding--;
      this.maybeFold();
    }
  }
}
