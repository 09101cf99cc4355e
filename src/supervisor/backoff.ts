/** Restart policy of a supervised worker: doubling waits, reset after a long enough healthy run. */
export interface RestartPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  /** A run at least this long counts as healthy: the next failure waits `baseMs` again. */
  readonly healthyAfterMs: number;
  /** More restarts than this within `windowMs` and the supervisor gives up (exit 1). */
  readonly maxRestarts: number;
  readonly windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  baseMs: 500,
  maxMs: 30_000,
  healthyAfterMs: 30_000,
  maxRestarts: 10,
  windowMs: 120_000,
};

/** Tracks one worker's failures; pure, so the policy is unit-tested without processes. */
export class RestartTracker {
  private failuresInARow = 0;
  private restarts: number[] = [];

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {}

  /** After an exit at `now` of a run that lasted `ranMs`: the wait before restarting, or undefined to give up. */
  next(now: number, ranMs: number): number | undefined {
    if (ranMs >= this.policy.healthyAfterMs) this.failuresInARow = 0;
    this.restarts = this.restarts.filter((t) => now - t < this.policy.windowMs);
    if (this.restarts.length >= this.policy.maxRestarts) return undefined;
    this.restarts.push(now);
    const wait = Math.min(this.policy.maxMs, this.policy.baseMs * 2 ** this.failuresInARow);
    this.failuresInARow++;
    return wait;
  }
}
