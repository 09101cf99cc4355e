import type pg from 'pg';
import { newEvent, swapKey } from '../events/keys.ts';
import type { EventAppender } from '../events/producer.ts';
import { RateLimiter } from '../ingest/webhook/rate-limit.ts';
import { mapStatus } from '../swap/status.ts';
import type { Logger } from '../observability/log.ts';
import { MetricsRegistry, type Counter, type Gauge } from '../observability/metrics.ts';
import { RateLimitedError, SwapNotFoundError } from '../partner/errors.ts';
import type { SwapStatus } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { changesOf, pollReport, reportFingerprint, type PolledSwap } from './change.ts';
import { PollSchedule } from './schedule.ts';
import pLimit, { type LimitFunction } from 'p-limit';
import { confirmationCandidates, pollingSet, recordConfirmation, type ConfirmationOutcome } from './set.ts';

export interface PollerMetrics {
  readonly registry: MetricsRegistry;
  /** GET /status results by provider and outcome (changed, unchanged, unmappable, not_found, error...). */
  readonly polls: Counter;
  readonly appended: Counter;
  /** Partner statuses the provider's mapping does not know: logged, counted, the swap stays in the set. */
  readonly unmappable: Counter;
  readonly rateLimited: Counter;
  readonly confirmations: Counter;
  /** Swaps in the polling set at the last tick. */
  readonly setSize: Gauge;
  /** Providers paused by a 420 (Retry-After) at the last tick. */
  readonly pausedProviders: Gauge;
}

export function createPollerMetrics(registry = new MetricsRegistry()): PollerMetrics {
  return {
    registry,
    polls: registry.counter('swap_ledger_poller_polls_total', 'GET /status results by provider and outcome', [
      'provider',
      'outcome',
    ]),
    appended: registry.counter(
      'swap_ledger_poller_status_reported_total',
      'StatusReported events appended by polls',
      ['provider'],
    ),
    unmappable: registry.counter(
      'swap_ledger_poller_unmappable_status_total',
      'Polled partner statuses the provider mapping does not know (the swap stays in the polling set)',
      ['provider'],
    ),
    rateLimited: registry.counter('swap_ledger_poller_rate_limited_total', 'Partner 420 answers to polls', [
      'provider',
    ]),
    confirmations: registry.counter(
      'swap_ledger_poller_confirmations_total',
      'Confirming polls of swaps made final by webhook, by outcome',
      ['provider', 'outcome'],
    ),
    setSize: registry.gauge(
      'swap_ledger_poller_polling_set_size',
      'Swaps in the polling set at the last tick',
    ),
    pausedProviders: registry.gauge(
      'swap_ledger_poller_paused_providers',
      'Providers paused after a 420 (Retry-After) at the last tick',
    ),
  };
}

/** Where the poller reads its sets and records confirmations (Postgres unless replaced, e.g. in tests). */
export interface PollerStore {
  pollingSet(): Promise<PolledSwap[]>;
  confirmationCandidates(): Promise<PolledSwap[]>;
  recordConfirmation(c: {
    swapId: string;
    providerId: string;
    outcome: ConfirmationOutcome;
    detail?: string;
    eventId?: string;
  }): Promise<void>;
}

export function postgresPollerStore(
  pool: pg.Pool,
  confirmWindowHours: number,
  providerIds?: readonly string[],
  closedGraceHours?: number,
): PollerStore {
  return {
    pollingSet: () =>
      pollingSet(pool, {
        ...(providerIds ? { providerIds } : {}),
        ...(closedGraceHours !== undefined ? { closedGraceHours } : {}),
      }),
    confirmationCandidates: () => confirmationCandidates(pool, confirmWindowHours, providerIds),
    recordConfirmation: (c) => recordConfirmation(pool, c),
  };
}

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
  readonly now?: () => number;
}

export interface TickReport {
  readonly polled: number;
  readonly appended: number;
  readonly confirmed: number;
  /** Due swaps left for a later tick (rate limit, provider paused by 420, provider disabled). */
  readonly deferred: number;
  readonly setSize: number;
}

type Kind = 'poll' | 'confirm';
type PollOutcome =
  'appended' | 'unchanged' | 'awaiting_projection' | 'unmappable' | 'not_found' | 'rate_limited' | 'error';

/**
 * The status poller. Each tick reads the polling set (swaps not final, and the gateway's created swaps
 * not projected yet) and the swaps owed a confirming poll, then per provider polls the due ones with
 * at most `concurrency` calls in flight and a token bucket. A 420 pauses the provider for its
 * Retry-After; an error, a 404 or an unmappable status backs the swap off (PollSchedule). A result is
 * appended as StatusReported (source poll) only when the projector would change something (changesOf),
 * and not twice while the projection has not moved. A swap leaves the set by becoming final, or when
 * its closed status (EXPIRED) is older than the grace window; closed swaps are polled CLOSED_POLL_SLOWDOWN
 * times less often.
 *
 * State kept in memory only (lost on restart, harmlessly): next poll times, backoffs, provider pauses,
 * the last report appended per swap.
 */
/** How much slower than the provider's interval a closed (reopenable) swap is polled. */
export const CLOSED_POLL_SLOWDOWN = 10;

const keyOf = (s: PolledSwap) => swapKey(s.providerId, s.swapId);

export class Poller {
  private readonly schedule: PollSchedule;
  private readonly limiter: RateLimiter;
  /** At most `concurrency` polls in flight per provider (p-limit: FIFO, a failed task frees its slot). */
  private readonly semaphores = new Map<string, LimitFunction>();
  private readonly pausedUntil = new Map<string, number>();
  private readonly lastAppended = new Map<string, { fingerprint: string; version: number | null }>();
  private ticking: Promise<TickReport> | undefined;
  readonly metrics: PollerMetrics;

  constructor(private readonly options: PollerOptions) {
    this.schedule = new PollSchedule(options.backoff);
    this.limiter = new RateLimiter(() => this.now());
    this.metrics = options.metrics ?? createPollerMetrics();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** One tick; a tick still running is joined, never overlapped. */
  tick(): Promise<TickReport> {
    this.ticking ??= this.runTick().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** Resolves once the tick under way (if any) ended. */
  async settled(): Promise<void> {
    await this.ticking?.catch(() => undefined);
  }

  private async runTick(): Promise<TickReport> {
    const { store, logger } = this.options;
    const [open, confirms] = await Promise.all([store.pollingSet(), store.confirmationCandidates()]);
    const work: { swap: PolledSwap; kind: Kind }[] = [
      ...confirms.map((swap) => ({ swap, kind: 'confirm' as const })),
      ...open.map((swap) => ({ swap, kind: 'poll' as const })),
    ];
    const listed = new Set(work.map((w) => keyOf(w.swap)));
    this.schedule.retain(listed);
    for (const id of this.lastAppended.keys()) if (!listed.has(id)) this.lastAppended.delete(id);

    const byProvider = new Map<string, typeof work>();
    for (const w of work) {
      const list = byProvider.get(w.swap.providerId) ?? [];
      list.push(w);
      byProvider.set(w.swap.providerId, list);
    }
    let deferred = 0;
    const tasks: Promise<PollOutcome>[] = [];
    const kinds: Kind[] = [];
    for (const [providerId, items] of byProvider) {
      const partner = await this.options.partners.get(providerId).catch((e: unknown) => {
        logger.warn({ provider: providerId, err: { message: (e as Error).message } }, 'provider unreadable');
        return undefined;
      });
      const now = this.now();
      const due = items.filter((w) => this.schedule.due(keyOf(w.swap), now));
      if (!partner || !partner.setup.enabled || (this.pausedUntil.get(providerId) ?? 0) > now) {
        deferred += due.length;
        continue;
      }
      const semaphore = this.semaphoreOf(providerId);
      for (let i = 0; i < due.length; i++) {
        if (
          (this.pausedUntil.get(providerId) ?? 0) > this.now() ||
          !this.limiter.take(providerId, this.options.rateLimit).allowed
        ) {
          deferred += due.length - i;
          break;
        }
        const { swap, kind } = due[i]!;
        kinds.push(kind);
        tasks.push(semaphore(() => this.pollOne(partner, swap, kind)));
      }
    }
    const outcomes = await Promise.all(tasks);
    const report: TickReport = {
      polled: outcomes.length,
      appended: outcomes.filter((o) => o === 'appended').length,
      confirmed: kinds.filter(
        (k, i) => k === 'confirm' && outcomes[i] !== 'error' && outcomes[i] !== 'rate_limited',
      ).length,
      deferred,
      setSize: open.length,
    };
    this.metrics.setSize.set(open.length);
    const at = this.now();
    this.metrics.pausedProviders.set([...this.pausedUntil.values()].filter((until) => until > at).length);
    if (report.polled > 0 || report.deferred > 0) logger.debug(report, 'poller tick');
    return report;
  }

  private semaphoreOf(providerId: string): LimitFunction {
    let s = this.semaphores.get(providerId);
    if (!s || s.concurrency !== this.options.concurrency) {
      s = pLimit(this.options.concurrency);
      this.semaphores.set(providerId, s);
    }
    return s;
  }

  private async pollOne(partner: ProviderPartner, swap: PolledSwap, kind: Kind): Promise<PollOutcome> {
    const { logger, metrics } = { logger: this.options.logger, metrics: this.metrics };
    const provider = swap.providerId;
    const key = keyOf(swap);
    // A closed swap (EXPIRED) is polled slowly: a late deposit is rare, but it moves money when it comes.
    const interval =
      partner.setup.pollIntervalSeconds * 1000 * (swap.statusClass === 'closed' ? CLOSED_POLL_SLOWDOWN : 1);
    const count = (outcome: PollOutcome) => {
      metrics.polls.inc({ provider, outcome });
      return outcome;
    };
    let status: SwapStatus;
    try {
      status = await partner.client.status(swap.swapId);
    } catch (e) {
      if (e instanceof RateLimitedError) {
        // The whole provider waits (Retry-After, else one backoff step); this swap is not at fault.
        const wait = e.retryAfterMs ?? this.options.backoff.baseMs;
        this.pausedUntil.set(provider, Math.max(this.pausedUntil.get(provider) ?? 0, this.now() + wait));
        metrics.rateLimited.inc({ provider });
        logger.warn({ provider, retryAfterMs: wait }, 'partner rate limited the poller; provider paused');
        return count('rate_limited');
      }
      const wait = this.schedule.failed(key, this.now(), interval);
      if (e instanceof SwapNotFoundError) {
        logger.warn(
          { provider, swapId: swap.swapId, retryInMs: wait },
          'partner does not know the swap (404)',
        );
        if (kind === 'confirm') await this.confirmed(swap, 'not_found', 'GET /status answered 404');
        return count('not_found');
      }
      logger.warn(
        { provider, swapId: swap.swapId, retryInMs: wait, err: { message: (e as Error).message } },
        'poll failed',
      );
      return count('error');
    }

    const mapped = mapStatus(partner.setup.statusMapping, status.status);
    if (!mapped) {
      const wait = this.schedule.failed(key, this.now(), interval);
      metrics.unmappable.inc({ provider });
      logger.warn(
        { provider, swapId: swap.swapId, providerStatus: status.status.slice(0, 100), retryInMs: wait },
        'polled status is not in the provider mapping; nothing appended, the swap stays in the polling set',
      );
      if (kind === 'confirm') await this.confirmed(swap, 'unmappable', status.status.slice(0, 100));
      return count('unmappable');
    }
    this.schedule.succeeded(key, this.now(), interval);
    const payload = pollReport(mapped, status);
    const changes = changesOf(swap, payload);
    if (changes.length === 0) {
      if (kind === 'confirm') await this.confirmed(swap, 'nothing_new');
      return count('unchanged');
    }
    const fingerprint = reportFingerprint(payload);
    const memo = this.lastAppended.get(key);
    if (kind === 'poll' && memo && memo.fingerprint === fingerprint && memo.version === swap.version) {
      return count('awaiting_projection'); // appended already; the projector has not folded it yet
    }
    const event = newEvent('StatusReported', new Date(this.now()), payload, {
      providerId: provider,
      swapId: swap.swapId,
      source: 'poll',
    });
    try {
      await this.options.ensureKeyPublished?.(event.aggregateKey);
      await this.options.appender.append(event);
    } catch (e) {
      const wait = this.schedule.failed(key, this.now(), interval);
      logger.warn(
        { provider, swapId: swap.swapId, retryInMs: wait, err: { message: (e as Error).message } },
        'poll result not appended',
      );
      return count('error');
    }
    this.lastAppended.set(key, { fingerprint, version: swap.version });
    metrics.appended.inc({ provider });
    logger.info(
      { provider, swapId: swap.swapId, status: payload.status, final: payload.final, changes, kind },
      'poll reported a change',
    );
    if (kind === 'confirm') await this.confirmed(swap, 'appended', changes.join(','), event.eventId);
    return count('appended');
  }

  private async confirmed(
    swap: PolledSwap,
    outcome: ConfirmationOutcome,
    detail?: string,
    eventId?: string,
  ): Promise<void> {
    this.metrics.confirmations.inc({ provider: swap.providerId, outcome });
    await this.options.store.recordConfirmation({
      swapId: swap.swapId,
      providerId: swap.providerId,
      outcome,
      ...(detail !== undefined ? { detail } : {}),
      ...(eventId !== undefined ? { eventId } : {}),
    });
  }
}
