import { TokenBucket } from '../../work/rate-limit.ts';

/**
 * What the webhook does about callers that fail authentication (partner interface v2 answers them 401):
 * their failures are throttled per source address, and their log lines sampled per source, so that a
 * flood of unauthenticated calls can neither fill the log nor probe keys at full speed. Authenticated
 * partners are never throttled here (only a failure takes a token), and every refusal is still counted
 * by the metrics. Pure: the clock is injected; the server flushes the sampler's summaries on a timer.
 */

export interface FailureLimits {
  /** Failures a source may make at once. */
  readonly burst: number;
  /** Failures a second a source regains, up to `burst`. */
  readonly perSecond: number;
}

/** Sources tracked at once; past it the least recently seen goes first (a full bucket loses nothing). */
const MAX_SOURCES = 10_000;

/** Per source address, a token bucket of authentication failures: none left, the answer is 429. */
export class AuthFailureThrottle {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly limits: FailureLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** One more failure of `source`: allowed (401), or refused with the seconds to wait (429). */
  fail(source: string): { allowed: true } | { allowed: false; retryAfter: number } {
    let bucket = this.buckets.get(source);
    if (bucket) this.buckets.delete(source);
    else bucket = new TokenBucket({ perSecond: this.limits.perSecond, burst: this.limits.burst }, this.now());
    this.buckets.set(source, bucket); // last: the Map's order is the eviction order
    if (this.buckets.size > MAX_SOURCES) this.buckets.delete(this.buckets.keys().next().value!);
    const d = bucket.take(this.now());
    return d.allowed ? { allowed: true } : { allowed: false, retryAfter: d.retryAfter! };
  }
}

/** Summary of a source's lines left out in one window. */
export interface SuppressedLines {
  readonly source: string;
  readonly suppressed: number;
}

/**
 * The first `linesPerWindow` refusal lines of each source in a window of `windowMs` are logged; the rest
 * only counted, and `flush` (called once a window) hands back one summary per source that had lines left
 * out. Sources beyond MAX_SOURCES in a window share one entry, "*".
 */
export class RefusalLogSampler {
  private readonly windows = new Map<string, { start: number; logged: number; suppressed: number }>();

  constructor(
    private readonly linesPerWindow: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether this refusal of `source` gets its own line. */
  admit(source: string): boolean {
    const now = this.now();
    const key = this.windows.has(source) || this.windows.size < MAX_SOURCES ? source : '*';
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      // A window that ended with lines left out keeps its count for the next flush.
      w = { start: now, logged: 0, suppressed: w?.suppressed ?? 0 };
      this.windows.set(key, w);
    }
    if (w.logged < this.linesPerWindow) {
      w.logged++;
      return true;
    }
    w.suppressed++;
    return false;
  }

  /** The summaries of lines left out since the last flush; sources quiet for a whole window are forgotten. */
  flush(): SuppressedLines[] {
    const now = this.now();
    const out: SuppressedLines[] = [];
    for (const [source, w] of this.windows) {
      if (w.suppressed > 0) out.push({ source, suppressed: w.suppressed });
      w.suppressed = 0;
      if (now - w.start >= this.windowMs) this.windows.delete(source);
    }
    return out;
  }
}
