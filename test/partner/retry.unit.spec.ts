import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  parseRetryAfter,
  resolveRetryPolicy,
  retryDecision,
  withRetry,
  type RetryPolicy,
  type Retryability,
} from '../../src/partner/retry.ts';

const policy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };

describe('backoff with full jitter', () => {
  it('spans [0, min(cap, base * 2^(n-1))) with the random draw', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, policy, () => 0.999999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(2, policy, () => 0.5)).toBe(100);
  });
});

describe('retryDecision', () => {
  const retryable: Retryability = { retryable: true };
  it('stops on a non-retryable failure and when attempts are spent', () => {
    expect(retryDecision({ retryable: false }, 1, policy, () => 0.5)).toEqual({ retry: false });
    expect(retryDecision(retryable, 5, policy, () => 0.5)).toEqual({ retry: false });
    expect(retryDecision(retryable, 4, policy, () => 0.5)).toEqual({ retry: true, delayMs: 400 });
  });

  it('waits Retry-After plus a little jitter, and gives up on a wait beyond the cap', () => {
    expect(retryDecision({ retryable: true, retryAfterMs: 2000 }, 1, policy, () => 0.5)).toEqual({
      retry: true,
      delayMs: 2050,
    });
    expect(retryDecision({ retryable: true, retryAfterMs: 0 }, 1, policy, () => 0)).toEqual({
      retry: true,
      delayMs: 0,
    });
    expect(retryDecision({ retryable: true, retryAfterMs: 5001 }, 1, policy, () => 0)).toEqual({
      retry: false,
    });
  });
});

describe('withRetry', () => {
  it('retries with the computed delays and returns the first success', async () => {
    const slept: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async (n) => {
        calls++;
        if (n < 3) throw new Error(`fail ${n}`);
        return 'ok';
      },
      {
        policy,
        classify: () => ({ retryable: true }),
        sleep: async (ms) => void slept.push(ms),
        random: () => 0.5,
      },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    expect(slept).toEqual([50, 100]);
  });

  it('throws the last error once attempts are spent', async () => {
    const slept: number[] = [];
    await expect(
      withRetry(
        async (n) => {
          throw new Error(`fail ${n}`);
        },
        {
          policy: { ...policy, maxAttempts: 3 },
          classify: () => ({ retryable: true }),
          sleep: async (ms) => void slept.push(ms),
        },
      ),
    ).rejects.toThrow('fail 3');
    expect(slept).toHaveLength(2);
  });

  it('does not retry what the classifier refuses and reports each retry', async () => {
    const seen: number[] = [];
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new Error(calls === 1 ? 'transient' : 'fatal');
        },
        {
          policy,
          classify: (e) => ({ retryable: (e as Error).message === 'transient' }),
          sleep: async () => undefined,
          onRetry: ({ attempt }) => seen.push(attempt),
        },
      ),
    ).rejects.toThrow('fatal');
    expect(calls).toBe(2);
    expect(seen).toEqual([1]);
  });

  it('stops when the caller aborts during the wait', async () => {
    const ac = new AbortController();
    let calls = 0;
    const p = withRetry(
      async () => {
        calls++;
        throw new Error('transient');
      },
      {
        policy: { ...policy, baseDelayMs: 10_000, maxDelayMs: 10_000 },
        classify: () => ({ retryable: true }),
        signal: ac.signal,
        random: () => 0.9,
      },
    );
    setTimeout(() => ac.abort(new Error('caller gave up')), 20);
    await expect(p).rejects.toThrow();
    expect(calls).toBe(1);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2015-10-21T07:28:00Z');
  it.each([
    ['0', 0],
    ['12', 12_000],
    [' 3 ', 3000],
    ['Wed, 21 Oct 2015 07:28:10 GMT', 10_000],
    ['Wed, 21 Oct 2015 07:27:00 GMT', 0],
    ['1.5', undefined],
    ['-1', undefined],
    ['soon', undefined],
    ['', undefined],
    [null, undefined],
  ])('%j -> %j', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});

describe('resolveRetryPolicy', () => {
  it('fills defaults and refuses nonsense', () => {
    expect(resolveRetryPolicy(undefined)).toEqual(DEFAULT_RETRY_POLICY);
    expect(resolveRetryPolicy({ maxAttempts: 1 }).maxAttempts).toBe(1);
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => resolveRetryPolicy({ baseDelayMs: -1 })).toThrow(RangeError);
  });
});
