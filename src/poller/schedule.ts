/**
 * When each swap is polled next, in memory (a restarted poller polls every open swap once, then settles):
 * after a poll that answered, one provider poll interval later; after a failure (network or partner
 * error, 404, a status the mapping does not know), an exponential backoff of its own,
 * min(maxMs, baseMs * 2^(failures - 1)), never sooner than the interval. Pure: the clock is passed in.
 */
export class PollSchedule {
  private readonly state = new Map<string, { nextAt: number; failures: number }>();

  constructor(private readonly backoff: { readonly baseMs: number; readonly maxMs: number }) {}

  due(swapId: string, nowMs: number): boolean {
    const s = this.state.get(swapId);
    return s === undefined || s.nextAt <= nowMs;
  }

  succeeded(swapId: string, nowMs: number, intervalMs: number): void {
    this.state.set(swapId, { nextAt: nowMs + intervalMs, failures: 0 });
  }

  /** Records a failure; returns the wait before the next attempt. */
  failed(swapId: string, nowMs: number, intervalMs: number): number {
    const failures = (this.state.get(swapId)?.failures ?? 0) + 1;
    const wait = Math.max(intervalMs, this.backoffMs(failures));
    this.state.set(swapId, { nextAt: nowMs + wait, failures });
    return wait;
  }

  /** When the swap is due next (0: now, never polled here). */
  nextAt(swapId: string): number {
    return this.state.get(swapId)?.nextAt ?? 0;
  }

  failures(swapId: string): number {
    return this.state.get(swapId)?.failures ?? 0;
  }

  backoffMs(failures: number): number {
    if (failures <= 0) return 0;
    // 2^30 is far past any cap; bounding the exponent keeps the number finite.
    return Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** Math.min(failures - 1, 30));
  }

  /** Forgets swaps that left the polling set (final, or no longer listed), so memory stays bounded. */
  retain(swapIds: ReadonlySet<string>): void {
    for (const id of this.state.keys()) if (!swapIds.has(id)) this.state.delete(id);
  }

  get size(): number {
    return this.state.size;
  }
}
