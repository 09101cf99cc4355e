import { describe, expect, it } from 'vitest';
import { RateLimiter, RequestPacer, TokenBucket, rateLimitHeaders } from '../../src/work/rate-limit.ts';

describe('token bucket', () => {
  it('accepts a burst, then refuses until tokens come back at the configured rate', () => {
    const t0 = 1_700_000_000_000;
    const bucket = new TokenBucket({ perSecond: 2, burst: 3 }, t0);
    expect([1, 2, 3].map(() => bucket.take(t0).allowed)).toEqual([true, true, true]);
    const refused = bucket.take(t0);
    expect(refused).toMatchObject({ allowed: false, limit: 3, remaining: 0, retryAfter: 1 });
    // 3 tokens at 2/s: full again 1.5 s later.
    expect(refused.reset).toBe(Math.ceil((t0 + 1500) / 1000));
    expect(bucket.take(t0 + 499).allowed).toBe(false); // 0.998 tokens
    expect(bucket.take(t0 + 500).allowed).toBe(true); // the 499 ms above count: 1 token now
    expect(bucket.take(t0 + 500).allowed).toBe(false);
    const later = bucket.take(t0 + 60_000);
    expect(later).toMatchObject({ allowed: true, remaining: 2, retryAfter: undefined });
  });

  it('never exceeds the burst after a long quiet period, and a clock stepping back adds nothing', () => {
    const bucket = new TokenBucket({ perSecond: 1, burst: 2 }, 0);
    expect(bucket.take(10_000_000).remaining).toBe(1);
    expect(bucket.take(10_000_000).remaining).toBe(0);
    expect(bucket.take(5_000_000).allowed).toBe(false);
  });

  it('a slow rate asks to retry after the whole wait', () => {
    const bucket = new TokenBucket({ perSecond: 1, burst: 1 }, 0);
    bucket.take(0);
    expect(bucket.take(100).retryAfter).toBe(1);
    const slow = new TokenBucket({ perSecond: 1, burst: 1 }, 0);
    slow.take(0);
    expect(slow.take(0)).toMatchObject({ retryAfter: 1, reset: 1 });
  });

  it('refuses a meaningless configuration', () => {
    expect(() => new TokenBucket({ perSecond: 0, burst: 1 }, 0)).toThrow();
    expect(() => new TokenBucket({ perSecond: 1, burst: 0 }, 0)).toThrow();
  });
});

describe('rate limiter', () => {
  it('keeps one bucket per provider and starts afresh when the limits change', () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const cfg = { perSecond: 1, burst: 1 };
    expect(limiter.take('a', cfg).allowed).toBe(true);
    expect(limiter.take('a', cfg).allowed).toBe(false);
    expect(limiter.take('b', cfg).allowed).toBe(true); // another provider's bucket
    expect(limiter.take('a', { perSecond: 1, burst: 5 }).allowed).toBe(true);
    now = 1000;
    expect(limiter.take('b', cfg).allowed).toBe(true);
  });

  it('renders the interface headers; Retry-After only when refused', () => {
    expect(
      rateLimitHeaders({ allowed: false, limit: 10, remaining: 0, reset: 1700000001, retryAfter: 2 }),
    ).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1700000001',
      'retry-after': '2',
    });
    expect(
      rateLimitHeaders({ allowed: true, limit: 10, remaining: 9, reset: 1, retryAfter: undefined }),
    ).not.toHaveProperty('retry-after');
  });
});

describe('the request pacer: a call waits its turn instead of being refused', () => {
  it('spaces calls at the rate: the first at once, each next 1000/perSecond ms after the one before', async () => {
    let clock = 10_000;
    const waits: number[] = [];
    const pacer = new RequestPacer(
      4,
      () => clock,
      async (ms) => {
        waits.push(ms);
      },
    );
    await pacer.take();
    await pacer.take();
    await pacer.take();
    expect(waits).toEqual([250, 500]);
    // After a pause longer than the spacing, the next call goes at once again.
    clock += 5_000;
    await pacer.take();
    expect(waits).toEqual([250, 500]);
  });
});
