import { newEvent, swapKey } from '../events/keys.ts';
import type { EventAppender } from '../events/producer.ts';
import { RateLimiter } from '../work/rate-limit.ts';
import { mapStatus } from '../swap/status.ts';
import type { Logger } from '../observability/log.ts';
import { RateLimitedError, SwapNotFoundError } from '../partner/errors.ts';
import type { SwapStatus } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { pollReport } from '../swap/report.ts';
import { changesOf, reportFingerprint, type PolledSwap } from './change.ts';
import { DueSchedule } from '../work/schedule.ts';
import pLimit, { type LimitFunction } from 'p-limit';
import {
  CONFIRM_BACKOFF,
  CONFIRM_DEADLINE_HOURS,
  confirmationDeadline,
  judgeConfirmation,
  missingFigures,
  nextConfirmationAt,
} from './confirm.ts';
import { createPollerMetrics, type PollerMetrics } from './metrics.ts';
import { type ConfirmCandidate, type ConfirmationOutcome, type PollerStore } from './set.ts';
import type { WorkLeases } from '../db/lease.ts';

export { createPollerMetrics, type PollerMetrics } from './metrics.ts';
export { postgresPollerStore, type PollerStore } from './set.ts';

// Over 400 lines on purpose: a tick's two kinds of work, the regular polls and the confirming polls of
// webhook-final swaps, share one rate limiter, one semaphore and one pause per provider, and one append path
// (outbox first, then the fingerprint that keeps a poll from being appended twice); apart, each would pass
// that state back and forth. Its metrics, its store and its pure rules (change.ts, confirm.ts) stand apart.

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

export interface TickReport {
  readonly polled: number;
  readonly appended: number;
  readonly confirmed: number;
  /** Due swaps left for a later tick (rate limit, provider paused by 420, provider disabled). */
  readonly deferred: number;
  /** Due here, but another poller holds their lease or polled them: not polled. */
  readonly leased?: number;
  readonly setSize: number;
}

type Kind = 'poll' | 'confirm';
type PollOutcome =
  | 'appended'
  | 'unchanged'
  | 'awaiting_projection'
  | 'unmappable'
  | 'not_found'
  | 'rate_limited'
  | 'error'
  /** A confirming poll another poller recorded first: nothing appended. */
  | 'taken';

/**
 * The status poller. Each tick reads the polling set (swaps not final, and the gateway's created swaps
 * not projected yet) and the swaps owed a confirming poll, then per provider polls the due ones with
 * at most `concurrency` calls in flight and a token bucket. A 420 pauses the provider for its
 * Retry-After; an error, a 404 or an unmappable status backs the swap off (DueSchedule). A result is
 * appended as StatusReported (source poll) only when the projector would change something (changesOf),
 * and not twice while the projection has not moved. A swap leaves the set by becoming final, or when
 * its closed status (EXPIRED) is older than the grace window; closed swaps are polled CLOSED_POLL_SLOWDOWN
 * times less often.
 *
 * Confirming polls (a swap made final by webhook) keep their own schedule in platform.poll_confirmations,
 * never the swap's regular one: the first is due at once; each answer that is not the swap's final status
 * with every needed figure (confirm.ts) asks again after a backoff, up to the deadline, where the swap is
 * given up with its missing figures (outcome `deadline`, logged at warn, counted). An attempt is recorded
 * before its StatusReported is appended, conditionally (set.ts recordConfirmation), so two pollers of one
 * provider never both append it.
 *
 * State kept in memory only (lost on restart, harmlessly): next poll times, backoffs (of confirming polls:
 * after errors only), provider pauses, the last report appended per swap.
 */
/** How much slower than the provider's interval a closed (reopenable) swap is polled. */
export const CLOSED_POLL_SLOWDOWN = 10;

const keyOf = (s: PolledSwap) => swapKey(s.providerId, s.swapId);

type Work = { swap: PolledSwap; kind: 'poll' } | { swap: ConfirmCandidate; kind: 'confirm' };

export class Poller {
  private readonly schedule: DueSchedule;
  /** Backoff of confirming polls that got no answer (network or partner error); answers are scheduled in Postgres. */
  private readonly confirmErrors: DueSchedule;
  private readonly limiter: RateLimiter;
  /** At most `concurrency` polls in flight per provider (p-limit: FIFO, a failed task frees its slot). */
  private readonly semaphores = new Map<string, LimitFunction>();
  private readonly pausedUntil = new Map<string, number>();
  private readonly lastAppended = new Map<string, { fingerprint: string; version: number | null }>();
  private ticking: Promise<TickReport> | undefined;
  private expiredWithMoneyLogged = new Map<string, number>();
  private readonly deadlineMs: number;
  private readonly confirmBackoff: { readonly baseMs: number; readonly maxMs: number };
  readonly metrics: PollerMetrics;

  constructor(private readonly options: PollerOptions) {
    this.schedule = new DueSchedule(options.backoff);
    this.confirmErrors = new DueSchedule(options.backoff);
    this.limiter = new RateLimiter(() => this.now());
    this.metrics = options.metrics ?? createPollerMetrics();
    this.deadlineMs = options.confirm?.deadlineMs ?? CONFIRM_DEADLINE_HOURS * 3_600_000;
    this.confirmBackoff = options.confirm?.backoff ?? CONFIRM_BACKOFF;
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
    const [open, candidates] = await Promise.all([
      store.pollingSet(),
      store.confirmationCandidates(this.now()),
    ]);
    // Past its deadline a swap is given up without another poll (one never asked gets its one poll first).
    const confirms: ConfirmCandidate[] = [];
    for (const c of candidates) {
      if (c.attempts > 0 && this.now() >= this.deadlineOf(c)) await this.abandon(c);
      else confirms.push(c);
    }
    const work: Work[] = [
      ...confirms.map((swap) => ({ swap, kind: 'confirm' as const })),
      ...open.map((swap) => ({ swap, kind: 'poll' as const })),
    ];
    this.schedule.retain(new Set(open.map(keyOf)));
    this.confirmErrors.retain(new Set(confirms.map(keyOf)));
    const listed = new Set(work.map((w) => keyOf(w.swap)));
    for (const id of this.lastAppended.keys()) if (!listed.has(id)) this.lastAppended.delete(id);

    const byProvider = new Map<string, Work[]>();
    for (const w of work) {
      const list = byProvider.get(w.swap.providerId) ?? [];
      list.push(w);
      byProvider.set(w.swap.providerId, list);
    }
    let deferred = 0;
    let leased = 0;
    const tasks: Promise<PollOutcome>[] = [];
    const kinds: Kind[] = [];
    for (const [providerId, items] of byProvider) {
      const partner = await this.options.partners.get(providerId).catch((e: unknown) => {
        logger.warn({ provider: providerId, err: e }, 'provider unreadable');
        return undefined;
      });
      const now = this.now();
      // A confirming poll is due by its own record (the store lists only those due), never by the swap's
      // regular schedule: a swap polled a moment before its final webhook is confirmed at the next tick.
      const due = items.filter((w) =>
        w.kind === 'confirm'
          ? this.confirmErrors.due(keyOf(w.swap), now)
          : this.schedule.due(keyOf(w.swap), now),
      );
      if (!partner || !partner.setup.enabled || (this.pausedUntil.get(providerId) ?? 0) > now) {
        deferred += due.length;
        continue;
      }
      const mine = await this.claim(providerId, due);
      if (!mine) {
        deferred += due.length;
        continue;
      }
      leased += due.length - mine.length;
      const semaphore = this.semaphoreOf(providerId);
      for (let i = 0; i < mine.length; i++) {
        if (
          (this.pausedUntil.get(providerId) ?? 0) > this.now() ||
          !this.limiter.take(providerId, this.options.rateLimit).allowed
        ) {
          deferred += mine.length - i;
          await this.release(mine.slice(i), providerId);
          break;
        }
        const w = mine[i]!;
        kinds.push(w.kind);
        tasks.push(
          semaphore(async () => {
            try {
              return w.kind === 'confirm'
                ? await this.confirmOne(partner, w.swap)
                : await this.pollOne(partner, w.swap);
            } finally {
              await this.release([w], providerId);
            }
          }),
        );
      }
    }
    const outcomes = await Promise.all(tasks);
    const report: TickReport = {
      polled: outcomes.length,
      appended: outcomes.filter((o) => o === 'appended').length,
      confirmed: kinds.filter(
        (k, i) =>
          k === 'confirm' &&
          outcomes[i] !== 'error' &&
          outcomes[i] !== 'rate_limited' &&
          outcomes[i] !== 'taken',
      ).length,
      deferred,
      leased,
      setSize: open.length,
    };
    this.metrics.setSize.set(open.length);
    await this.countExpiredWithMoney();
    // A lease row idle and due a day ago says nothing a missing row does not: the table stays small.
    await this.options.leases
      ?.prune(this.now() - 86_400_000)
      .catch((e: unknown) => logger.warn({ err: e }, 'poll leases not pruned'));
    const at = this.now();
    this.metrics.pausedProviders.set([...this.pausedUntil.values()].filter((until) => until > at).length);
    if (report.polled > 0 || report.deferred > 0) logger.debug(report, 'poller tick');
    return report;
  }

  /**
   * A closed swap where money moved leaves the slow polling set at the end of its grace window: nothing
   * watches it after that, so it is counted (and alerted on) until a final status settles it.
   */
  private async countExpiredWithMoney(): Promise<void> {
    const read = this.options.store.expiredWithMoneyPastGrace;
    if (!read) return;
    const counts = await read().catch((e: unknown) => {
      this.options.logger.warn({ err: e }, 'expired swaps with money unread');
      return undefined;
    });
    if (!counts) return;
    const gauge = this.metrics.expiredWithMoney;
    gauge.reset();
    for (const c of counts) {
      gauge.set({ provider: c.providerId }, c.swaps);
      if (c.swaps !== this.expiredWithMoneyLogged.get(c.providerId))
        this.options.logger.warn(
          { provider: c.providerId, swaps: c.swaps },
          'closed swaps where money moved left the grace window unsettled (finance.ledger_exceptions)',
        );
    }
    this.expiredWithMoneyLogged = new Map(counts.map((c) => [c.providerId, c.swaps]));
  }

  private semaphoreOf(providerId: string): LimitFunction {
    let s = this.semaphores.get(providerId);
    if (!s || s.concurrency !== this.options.concurrency) {
      s = pLimit(this.options.concurrency);
      this.semaphores.set(providerId, s);
    }
    return s;
  }

  /**
   * With leases, the due swaps of a provider that this poller may poll: those whose lease it claimed (a
   * regular poll only when due by the shared schedule; a confirming poll whenever no one holds the swap).
   * Claimed before the rate limiter is asked, so no token goes to a swap another poller has. Undefined:
   * Postgres did not answer, nothing is polled this tick.
   */
  private async claim(providerId: string, due: Work[]): Promise<Work[] | undefined> {
    const leases = this.options.leases;
    if (!leases || due.length === 0) return due;
    const keys = (kind: Kind) => due.filter((w) => w.kind === kind).map((w) => keyOf(w.swap));
    try {
      const now = this.now();
      const [polls, confirms] = await Promise.all([
        leases.claim(keys('poll'), now),
        leases.claim(keys('confirm'), now, { anyIdle: true }),
      ]);
      return due.filter((w) => (w.kind === 'poll' ? polls : confirms).has(keyOf(w.swap)));
    } catch (e) {
      this.options.logger.warn(
        { provider: providerId, err: e },
        'poll leases not claimed; the due swaps wait for the next tick',
      );
      return undefined;
    }
  }

  /**
   * Gives the leases back, each swap due again when this poller would poll it next (a confirming poll's
   * next time is in platform.poll_confirmations, a 420's pause the provider's). A failure lets them expire.
   */
  private async release(work: Work[], providerId: string): Promise<void> {
    const leases = this.options.leases;
    if (!leases) return;
    const paused = this.pausedUntil.get(providerId) ?? 0;
    await leases
      .release(
        work.map((w) => ({
          key: keyOf(w.swap),
          nextAtMs: Math.max(w.kind === 'poll' ? this.schedule.nextAt(keyOf(w.swap)) : 0, paused, this.now()),
        })),
      )
      .catch((e: unknown) =>
        this.options.logger.warn(
          { provider: providerId, err: e },
          'poll leases not released; they expire by themselves',
        ),
      );
  }

  /** A 420: the whole provider waits (Retry-After, else one backoff step); the swap is not at fault. */
  private rateLimited(provider: string, e: RateLimitedError): 'rate_limited' {
    const wait = e.retryAfterMs ?? this.options.backoff.baseMs;
    this.pausedUntil.set(provider, Math.max(this.pausedUntil.get(provider) ?? 0, this.now() + wait));
    this.metrics.rateLimited.inc({ provider });
    this.options.logger.warn(
      { provider, retryAfterMs: wait },
      'partner rate limited the poller; provider paused',
    );
    return 'rate_limited';
  }

  private async pollOne(partner: ProviderPartner, swap: PolledSwap): Promise<PollOutcome> {
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
      if (e instanceof RateLimitedError) return count(this.rateLimited(provider, e));
      const wait = this.schedule.failed(key, this.now(), interval);
      if (e instanceof SwapNotFoundError) {
        logger.warn(
          { provider, swapId: swap.swapId, retryInMs: wait },
          'partner does not know the swap (404)',
        );
        return count('not_found');
      }
      logger.warn({ provider, swapId: swap.swapId, retryInMs: wait, err: e }, 'poll failed');
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
      return count('unmappable');
    }
    this.schedule.succeeded(key, this.now(), interval);
    const payload = pollReport(mapped, status);
    const changes = changesOf(swap, payload);
    if (changes.length === 0) return count('unchanged');
    const fingerprint = reportFingerprint(payload);
    const memo = this.lastAppended.get(key);
    if (memo && memo.fingerprint === fingerprint && memo.version === swap.version) {
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
      logger.warn({ provider, swapId: swap.swapId, retryInMs: wait, err: e }, 'poll result not appended');
      return count('error');
    }
    this.lastAppended.set(key, { fingerprint, version: swap.version });
    metrics.appended.inc({ provider });
    logger.info(
      { provider, swapId: swap.swapId, status: payload.status, final: payload.final, changes, kind: 'poll' },
      'poll reported a change',
    );
    return count('appended');
  }

  private deadlineOf(swap: ConfirmCandidate): number {
    return confirmationDeadline(swap.finalAt, this.deadlineMs);
  }

  /**
   * One confirming GET /status. An answer that changes the swap (fills a figure, or contradicts it) is
   * appended as today; whatever it is, it is recorded first, conditionally (false: another poller recorded
   * this attempt, nothing is appended). Only the swap's final status with every needed figure ends the
   * confirming; a stale, blank, partial or unknown answer, or a 404, asks again after the backoff.
   */
  private async confirmOne(partner: ProviderPartner, swap: ConfirmCandidate): Promise<PollOutcome> {
    const { logger } = this.options;
    const provider = swap.providerId;
    const key = keyOf(swap);
    const count = (outcome: PollOutcome) => {
      this.metrics.polls.inc({ provider, outcome });
      return outcome;
    };
    const unknown = { complete: false, missing: missingFigures(swap, swap.status) };
    try {
      let status: SwapStatus;
      try {
        status = await partner.client.status(swap.swapId);
      } catch (e) {
        if (e instanceof RateLimitedError) return count(this.rateLimited(provider, e));
        if (e instanceof SwapNotFoundError) {
          logger.warn(
            { provider, swapId: swap.swapId, attempts: swap.attempts + 1 },
            'partner does not know the swap it made final (404); confirming goes on',
          );
          const taken = await this.recordAttempt(swap, 'not_found', unknown, 'GET /status answered 404');
          return count(taken ? 'not_found' : 'taken');
        }
        const wait = this.confirmErrors.failed(key, this.now(), 0);
        logger.warn({ provider, swapId: swap.swapId, retryInMs: wait, err: e }, 'confirming poll failed');
        return count('error');
      }
      this.confirmErrors.succeeded(key, this.now(), 0);

      const mapped = mapStatus(partner.setup.statusMapping, status.status);
      if (!mapped) {
        this.metrics.unmappable.inc({ provider });
        logger.warn(
          { provider, swapId: swap.swapId, providerStatus: status.status.slice(0, 100) },
          'confirming poll: status not in the provider mapping; nothing appended, confirming goes on',
        );
        const taken = await this.recordAttempt(swap, 'unmappable', unknown, status.status.slice(0, 100));
        return count(taken ? 'unmappable' : 'taken');
      }
      const payload = pollReport(mapped, status);
      const judged = judgeConfirmation(swap, payload);
      const changes = changesOf(swap, payload);
      if (changes.length === 0) {
        const taken = judged.stale
          ? await this.recordAttempt(swap, 'stale', judged, `GET /status says ${payload.status}`)
          : await this.recordAttempt(swap, 'nothing_new', judged);
        return count(taken ? 'unchanged' : 'taken');
      }
      const event = newEvent('StatusReported', new Date(this.now()), payload, {
        providerId: provider,
        swapId: swap.swapId,
        source: 'poll',
      });
      if (!(await this.recordAttempt(swap, 'appended', judged, changes.join(','), event.eventId)))
        return count('taken');
      try {
        await this.options.ensureKeyPublished?.(event.aggregateKey);
        await this.options.appender.append(event);
      } catch (e) {
        const wait = this.confirmErrors.failed(key, this.now(), 0);
        const message = (e as Error).message;
        await this.options.store.reopenConfirmation({
          swapId: swap.swapId,
          providerId: provider,
          attempts: swap.attempts + 1,
          detail: `not appended: ${message}`,
          at: this.now(),
        });
        logger.warn(
          { provider, swapId: swap.swapId, retryInMs: wait, err: e },
          'confirming poll result not appended',
        );
        return count('error');
      }
      this.metrics.appended.inc({ provider });
      logger.info(
        {
          provider,
          swapId: swap.swapId,
          status: payload.status,
          final: payload.final,
          changes,
          kind: 'confirm',
          missing: judged.missing,
        },
        'poll reported a change',
      );
      return count('appended');
    } catch (e) {
      // The confirmation record (Postgres) failed: nothing was appended after it; the swap stays due.
      const wait = this.confirmErrors.failed(key, this.now(), 0);
      logger.warn({ provider, swapId: swap.swapId, retryInMs: wait, err: e }, 'confirming poll not recorded');
      return count('error');
    }
  }

  /** Records an answered confirming attempt (see set.ts recordConfirmation); false: another poller did. */
  private async recordAttempt(
    swap: ConfirmCandidate,
    outcome: ConfirmationOutcome,
    judged: { readonly complete: boolean; readonly missing: readonly string[] },
    detail?: string,
    eventId?: string,
  ): Promise<boolean> {
    const at = this.now();
    const attempts = swap.attempts + 1;
    const taken = await this.options.store.recordConfirmation({
      swapId: swap.swapId,
      providerId: swap.providerId,
      seenAttempts: swap.attempts,
      outcome,
      state: judged.complete ? 'confirmed' : 'confirming',
      nextDueAt: judged.complete
        ? null
        : nextConfirmationAt(at, attempts, this.deadlineOf(swap), this.confirmBackoff),
      missing: judged.missing,
      at,
      ...(detail !== undefined ? { detail } : {}),
      ...(eventId !== undefined ? { eventId } : {}),
    });
    const log = { provider: swap.providerId, swapId: swap.swapId, outcome, attempts };
    if (!taken) this.options.logger.debug(log, 'another poller recorded this confirming poll first');
    else {
      this.metrics.confirmations.inc({ provider: swap.providerId, outcome });
      if (judged.complete) this.options.logger.info(log, 'swap confirmed: GET /status reported every figure');
    }
    return taken;
  }

  /**
   * The deadline passed before a complete answer: confirming stops, the figures the outcome needs and no
   * report gave are recorded as never reported (platform.confirmations_never_reported lists the swap).
   */
  private async abandon(swap: ConfirmCandidate): Promise<void> {
    const { logger } = this.options;
    const missing = missingFigures(swap, swap.status);
    const provider = swap.providerId;
    try {
      const taken = await this.options.store.recordConfirmation({
        swapId: swap.swapId,
        providerId: provider,
        seenAttempts: swap.attempts,
        outcome: 'deadline',
        state: 'abandoned',
        nextDueAt: null,
        missing,
        at: this.now(),
        detail: `no complete GET /status within ${this.deadlineMs / 3_600_000} h of the final status`,
      });
      if (!taken) return;
    } catch (e) {
      logger.warn({ provider, swapId: swap.swapId, err: e }, 'confirmation deadline not recorded');
      return;
    }
    this.metrics.confirmations.inc({ provider, outcome: 'deadline' });
    this.metrics.confirmationsAbandoned.inc({ provider });
    logger.warn(
      {
        provider,
        swapId: swap.swapId,
        status: swap.status,
        attempts: swap.attempts,
        finalAt: swap.finalAt,
        missing,
      },
      'confirming stopped at the deadline: GET /status never reported every figure; the missing ones are never reported',
    );
  }
}
