/**
 * When each key (a swap to poll, a transaction to look up) is worked next, in memory (a restarted worker
 * works every key once, then settles): after a success, one interval later; after a failure, an exponential
 * backoff of its own, min(maxMs, baseMs * 2^min(failures - 1, maxExponent)), never sooner than the interval.
 * The poller counts failures; the chain watcher counts every look as one (interval 0), so a transaction is
 * looked at less and less often. Pure: the clock is passed in.
 */
export class DueSchedule {
  private readonly state = new Map<string, { nextAt: number; failures: number }>();

  constructor(
    private readonly backoff: {
      readonly baseMs: number;
      readonly maxMs: number;
      readonly maxExponent?: number;
    },
  ) {}

  due(key: string, nowMs: number): boolean {
    const s = this.state.get(key);
    return s === undefined || s.nextAt <= nowMs;
  }

  succeeded(key: string, nowMs: number, intervalMs: number): void {
    this.state.set(key, { nextAt: nowMs + intervalMs, failures: 0 });
  }

  /** Records a failure; returns the wait before the next attempt. */
  failed(key: string, nowMs: number, intervalMs: number): number {
    const failures = (this.state.get(key)?.failures ?? 0) + 1;
    const wait = Math.max(intervalMs, this.backoffMs(failures));
    this.state.set(key, { nextAt: nowMs + wait, failures });
    return wait;
  }

  /** Sets the key's count as if it had failed `failures` times, due after that backoff (a key not worth looking at soon). */
  failedAsOften(key: string, nowMs: number, failures: number): void {
    this.state.set(key, { nextAt: nowMs + this.backoffMs(failures), failures });
  }

  /** Forgets one key: it is due at once. */
  forget(key: string): void {
    this.state.delete(key);
  }

  /** When the key is due next (0: now, never polled here). */
  nextAt(key: string): number {
    return this.state.get(key)?.nextAt ?? 0;
  }

  failures(key: string): number {
    return this.state.get(key)?.failures ?? 0;
  }

  backoffMs(failures: number): number {
    if (failures <= 0) return 0;
    // 2^30 is far past any cap; bounding the exponent keeps the number finite.
    return Math.min(
      this.backoff.maxMs,
      this.backoff.baseMs * 2 ** Math.min(failures - 1, this.backoff.maxExponent ?? 30),
    );
  }

  /** Forgets keys no longer worked (a swap final or no longer listed), so memory stays bounded. */
  retain(keys: ReadonlySet<string>): void {
    for (const id of this.state.keys()) if (!keys.has(id)) this.state.delete(id);
  }

  get size(): number {
    return this.state.size;
  }
}
