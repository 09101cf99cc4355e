/**
 * The two ways work keeps to a rate. Refusing (the webhook's per provider, the poller's calls per provider): a
 * token bucket per key
 * that holds at most `burst` tokens and gains `perSecond` tokens a second; a request takes one token or is
 * refused (the webhook answers 420, partner interface v2, "Limits"). Pure: the clock is injected.
 */

/** A bucket's size and refill, as a provider's `rateLimit` states it. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** X-RateLimit-Limit: the bucket size. */
  readonly limit: number;
  /** X-RateLimit-Remaining: whole requests still accepted right now. */
  readonly remaining: number;
  /** X-RateLimit-Reset: Unix time (seconds) by which the bucket is full again. */
  readonly reset: number;
  /** Retry-After (seconds, at least 1), when refused: the wait until one request is accepted again. */
  readonly retryAfter: number | undefined;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly config: RateLimit,
    nowMs: number,
  ) {
    if (!(config.perSecond > 0) || !(config.burst >= 1))
      throw new Error('rate limit needs perSecond > 0, burst >= 1');
    this.tokens = config.burst;
    this.last = nowMs;
  }

  take(nowMs: number): RateDecision {
    const { perSecond, burst } = this.config;
    // A clock that steps back never adds tokens.
    const elapsed = Math.max(0, nowMs - this.last) / 1000;
    this.tokens = Math.min(burst, this.tokens + elapsed * perSecond);
    this.last = Math.max(this.last, nowMs);
    const allowed = this.tokens >= 1;
    if (allowed) this.tokens -= 1;
    const untilFull = ((burst - this.tokens) / perSecond) * 1000;
    return {
      allowed,
      limit: burst,
      remaining: Math.floor(this.tokens),
      reset: Math.ceil((this.last + untilFull) / 1000),
      retryAfter: allowed ? undefined : Math.max(1, Math.ceil((1 - this.tokens) / perSecond)),
    };
  }
}

/** Buckets by provider; a provider whose limits changed (registry refresh) starts a fresh bucket. */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  take(providerId: string, config: RateLimit): RateDecision {
    let bucket = this.buckets.get(providerId);
    if (!bucket || bucket.config.perSecond !== config.perSecond || bucket.config.burst !== config.burst) {
      bucket = new TokenBucket({ perSecond: config.perSecond, burst: config.burst }, this.now());
      this.buckets.set(providerId, bucket);
    }
    return bucket.take(this.now());
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.reset),
    ...(d.retryAfter !== undefined ? { 'retry-after': String(d.retryAfter) } : {}),
  };
}

/**
 * Waiting instead of refusing (the chain watcher's calls to one source): each call waits its turn so requests
 * are spaced at `perSecond`, and a round never bursts past a source's limit nor is refused for it.
 */
export class RequestPacer {
  private next = 0;
  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** Resolves when this call's turn comes. */
  async take(): Promise<void> {
    const now = this.now();
    const at = Math.max(now, this.next);
    this.next = at + 1000 / this.perSecond;
    if (at > now) await this.sleep(at - now);
  }
}
