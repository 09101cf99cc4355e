import type { WorkLeases } from '../db/lease.ts';
import { newEvent, swapKey } from '../events/keys.ts';
import type { EventAppender } from '../events/producer.ts';
import type { StatusReported, SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { RateLimitedError } from '../partner/errors.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import type { PolledSwap } from './change.ts';
import type { PollerMetrics } from './metrics.ts';
import type { PollerStore } from './set.ts';

/**
 * What the poller's two kinds of work, the regular polls (regular.ts) and the confirming polls (confirming.ts),
 * share: the options, the words of a poll's outcome, a provider's pause after a 420, and the append path
 * (the swap's outbox first, then the report).
 */

export interface PollerOptions {
  readonly store: PollerStore;
  readonly partners: {
    get(providerId: string): Promise<ProviderPartner | undefined>;
  };
  readonly appender: Pick<EventAppender, 'append'>;
  /** Publishes a swap's pending outbox events before a poll result of it is appended. */
  readonly ensureKeyPublished?: (key: string) => Promise<void>;
  readonly logger: Logger;
  readonly metrics?: PollerMetrics;
  /** Per provider: GET /status calls in flight at once. */
  readonly concurrency: number;
  /** Per provider token bucket. */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  readonly backoff: { readonly baseMs: number; readonly maxMs: number };
  /**
   * Confirming polls: given up `deadlineMs` after the swap became final (default 48 h); asked again after
   * `backoff` (default 1 min doubling to 1 h) while an answer is not a complete confirmation.
   */
  readonly confirm?: {
    readonly deadlineMs?: number;
    readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  };
  readonly now?: () => number;
  /**
   * Several pollers of one provider: a swap is polled only under its lease (platform.work_leases), held
   * during the GET /status and the append, then released until the swap is due again. Without: alone.
   */
  readonly leases?: Pick<WorkLeases, 'claim' | 'release' | 'prune'>;
}

export type PollOutcome =
  | 'appended'
  | 'unchanged'
  | 'awaiting_projection'
  | 'unmappable'
  | 'not_found'
  | 'rate_limited'
  | 'error'
  /** A confirming poll another poller recorded first: nothing appended. */
  | 'taken';

export const keyOf = (s: Pick<PolledSwap, 'providerId' | 'swapId'>) => swapKey(s.providerId, s.swapId);

/** Per provider, until when a 420 holds its polls (in memory: a restart polls at once). */
export class ProviderPauses {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly options: Pick<PollerOptions, 'logger' | 'backoff'>,
    private readonly metrics: PollerMetrics,
    private readonly now: () => number,
  ) {}

  /** When the provider may be polled again (0: not paused). */
  of(provider: string): number {
    return this.until.get(provider) ?? 0;
  }

  paused(provider: string): boolean {
    return this.of(provider) > this.now();
  }

  /** Providers paused now. */
  count(): number {
    const at = this.now();
    return [...this.until.values()].filter((until) => until > at).length;
  }

  /** A 420: the whole provider waits (Retry-After, else one backoff step); the swap is not at fault. */
  rateLimited(provider: string, e: RateLimitedError): 'rate_limited' {
    const wait = e.retryAfterMs ?? this.options.backoff.baseMs;
    this.until.set(provider, Math.max(this.of(provider), this.now() + wait));
    this.metrics.rateLimited.inc({ provider });
    this.options.logger.warn(
      { provider, retryAfterMs: wait },
      'partner rate limited the poller; provider paused',
    );
    return 'rate_limited';
  }
}

/** What a regular or a confirming poll uses of the poller. */
export interface PollContext {
  readonly options: PollerOptions;
  readonly metrics: PollerMetrics;
  readonly pauses: ProviderPauses;
  now(): number;
}

/** Counts a poll's outcome by provider, and returns it. */
export function counted(poll: PollContext, provider: string, outcome: PollOutcome): PollOutcome {
  poll.metrics.polls.inc({ provider, outcome });
  return outcome;
}

/** A poll's answer as the event it appends (source poll). */
export function reportEvent(poll: PollContext, swap: PolledSwap, payload: StatusReported): SwapEvent {
  return newEvent('StatusReported', new Date(poll.now()), payload, {
    providerId: swap.providerId,
    swapId: swap.swapId,
    source: 'poll',
  });
}

/** Appends a poll's event after the swap's pending outbox events, so it never overtakes them. */
export async function appendReport(poll: PollContext, event: SwapEvent): Promise<void> {
  await poll.options.ensureKeyPublished?.(event.aggregateKey);
  await poll.options.appender.append(event);
}
