import { describe, expect, it } from 'vitest';
import { AuthFailureThrottle, RefusalLogSampler } from '../../src/ingest/webhook/outsiders.ts';

/** Issue 41 point 12: unauthenticated webhook calls throttled and their log lines sampled, per source. */
describe('authentication failures, per source address', () => {
  it('allows the burst, then refuses with the wait until one more is allowed; regains at the rate', () => {
    let now = 0;
    const t = new AuthFailureThrottle({ burst: 3, perSecond: 0.5 }, () => now);
    expect([t.fail('a'), t.fail('a'), t.fail('a')]).toEqual(Array(3).fill({ allowed: true }));
    expect(t.fail('a')).toEqual({ allowed: false, retryAfter: 2 });
    // Another source has its own bucket.
    expect(t.fail('b')).toEqual({ allowed: true });
    now = 2000;
    expect(t.fail('a')).toEqual({ allowed: true });
    expect(t.fail('a').allowed).toBe(false);
  });
});

describe('refusal log lines, per source address', () => {
  it('logs the first lines of a window, counts the rest, and sums them up once per flush', () => {
    let now = 0;
    const s = new RefusalLogSampler(2, 60_000, () => now);
    const admitted = Array.from({ length: 5 }, () => s.admit('a'));
    expect(admitted).toEqual([true, true, false, false, false]);
    expect(s.admit('b')).toBe(true);
    expect(s.flush()).toEqual([{ source: 'a', suppressed: 3 }]);
    expect(s.flush()).toEqual([]);
    // A new window logs its first lines again.
    now = 60_000;
    expect([s.admit('a'), s.admit('a'), s.admit('a')]).toEqual([true, true, false]);
    expect(s.flush()).toEqual([{ source: 'a', suppressed: 1 }]);
  });

  it('logs nothing one by one with zero lines a window, and loses no count across windows', () => {
    let now = 0;
    const s = new RefusalLogSampler(0, 1000, () => now);
    expect(s.admit('a')).toBe(false);
    now = 5000;
    expect(s.admit('a')).toBe(false);
    expect(s.flush()).toEqual([{ source: 'a', suppressed: 2 }]);
  });
});
