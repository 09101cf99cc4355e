import { setTimeout as delay } from 'node:timers/promises';

/**
 * Retry policy of the partner reads: exponential backoff with full jitter (a random delay in
 * [0, min(cap, base * 2^(n-1))]) so many workers hitting one partner do not retry in lockstep; a 420
 * waits for its Retry-After first. Sleep and random are injected so the policy is testable without timers.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; 1 disables retries. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  /** Cap of one backoff delay. */
  readonly maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the 420 goes to the caller at once. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 30_000,
};

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;
/** Uniform in [0, 1), like Math.random. */
export type Random = () => number;

export const realSleep: Sleep = async (ms, signal) => {
  await delay(ms, undefined, signal ? { signal } : undefined);
};

/** How a failure may be retried: `retryAfterMs` is set for a 420 that named its wait. */
export type Retryability =
  { readonly retryable: false } | { readonly retryable: true; readonly retryAfterMs?: number };

export function backoffDelayMs(retry: number, policy: RetryPolicy, random: Random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

export type RetryDecision = { readonly retry: false } | { readonly retry: true; readonly delayMs: number };

/** `attempt` is the 1-based number of the attempt that just failed. */
export function retryDecision(
  failure: Retryability,
  attempt: number,
  policy: RetryPolicy,
  random: Random,
): RetryDecision {
  if (!failure.retryable || attempt >= policy.maxAttempts) return { retry: false };
  if (failure.retryAfterMs !== undefined) {
    if (failure.retryAfterMs > policy.maxRetryAfterMs) return { retry: false };
    // A little jitter on top so the callers the partner held back do not all return at the same instant.
    return { retry: true, delayMs: failure.retryAfterMs + Math.floor(random() * policy.baseDelayMs) };
  }
  return { retry: true, delayMs: backoffDelayMs(attempt, policy, random) };
}

export interface RetryHooks {
  readonly policy: RetryPolicy;
  readonly classify: (error: unknown) => Retryability;
  readonly sleep?: Sleep;
  readonly random?: Random;
  readonly signal?: AbortSignal;
  readonly onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

/** Runs `attempt` until it succeeds, a failure is not retryable, or the attempts are spent (last error thrown). */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, hooks: RetryHooks): Promise<T> {
  const sleep = hooks.sleep ?? realSleep;
  const random = hooks.random ?? Math.random;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      const decision = retryDecision(hooks.classify(error), n, hooks.policy, random);
      if (!decision.retry || hooks.signal?.aborted) throw error;
      hooks.onRetry?.({ attempt: n, delayMs: decision.delayMs, error });
      await sleep(decision.delayMs, hooks.signal);
    }
  }
}

/** Retry-After as delta seconds or an HTTP date; a past date gives 0; unreadable gives undefined. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number.parseInt(v, 10) * 1000;
  if (!/[a-z]/i.test(v)) return undefined; // refuse "1.5", "-3": not an HTTP date either
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export function resolveRetryPolicy(partial: Partial<RetryPolicy> | undefined): RetryPolicy {
  const p = { ...DEFAULT_RETRY_POLICY, ...partial };
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1)
    throw new RangeError('retry.maxAttempts must be >= 1');
  for (const k of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    if (!Number.isFinite(p[k]) || p[k] < 0) throw new RangeError(`retry.${k} must be >= 0`);
  }
  return p;
}
