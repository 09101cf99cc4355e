import { RateLimiter } from '../work/rate-limit.ts';
import { RoundRunner, type RoundTrouble, type WorkGroup } from '../work/round.ts';
import type { PolledSwap } from './change.ts';
import { ConfirmingPolls } from './confirming.ts';
import { createPollerMetrics, type PollerMetrics } from './metrics.ts';
import { keyOf, ProviderPauses, type PollContext, type PollerOptions, type PollOutcome } from './polling.ts';
import { RegularPolls } from './regular.ts';
import type { ConfirmCandidate } from './set.ts';

export { createPollerMetrics, type PollerMetrics } from './metrics.ts';
export { postgresPollerStore, type PollerStore } from './set.ts';
export type { PollerOptions } from './polling.ts';
export { CLOSED_POLL_SLOWDOWN } from './regular.ts';

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

type Work = { swap: PolledSwap; kind: 'poll' } | { swap: ConfirmCandidate; kind: 'confirm' };

/** What a lease trouble of a tick is logged as. */
const TROUBLE: Record<RoundTrouble['step'], string> = {
  claim: 'poll leases not claimed; the due swaps wait for the next tick',
  release: 'poll leases not released; they expire by themselves',
  prune: 'poll leases not pruned',
  commit: 'poll round not committed',
};

/**
 * The status poller. Each tick reads the polling set (regular.ts) and the swaps owed a confirming poll
 * (confirming.ts), then per provider polls the due ones on the engine's rounds (src/work/round.ts): the
 * confirming polls first, then the regular ones, under their leases, at most `concurrency` calls in flight
 * and a token bucket per provider, both kinds together. A 420 pauses the provider for its Retry-After. A swap
 * leaves the set by becoming final, or when its closed status (EXPIRED) is older than the grace window.
 * In memory only (lost on restart, harmlessly): provider pauses and what regular.ts and confirming.ts keep.
 */
export class Poller {
  private readonly regular: RegularPolls;
  private readonly confirming: ConfirmingPolls;
  private readonly limiter: RateLimiter;
  private readonly pauses: ProviderPauses;
  private readonly rounds: RoundRunner<TickReport>;
  private expiredWithMoneyLogged = new Map<string, number>();
  private readonly now: () => number;
  readonly metrics: PollerMetrics;

  constructor(private readonly options: PollerOptions) {
    const now = (this.now = () => (options.now ?? Date.now)());
    this.metrics = options.metrics ?? createPollerMetrics();
    this.pauses = new ProviderPauses(options, this.metrics, now);
    const poll: PollContext = { options, metrics: this.metrics, pauses: this.pauses, now };
    this.regular = new RegularPolls(poll);
    this.confirming = new ConfirmingPolls(poll);
    this.limiter = new RateLimiter(now);
    this.rounds = new RoundRunner({ leases: options.leases, now, round: () => this.runTick() });
  }

  /** One tick; a tick still running is joined, never overlapped. */
  tick(): Promise<TickReport> {
    return this.rounds.round();
  }

  /** Resolves once the tick under way (if any) ended. */
  settled(): Promise<void> {
    return this.rounds.settled();
  }

  private async runTick(): Promise<TickReport> {
    const { store, logger } = this.options;
    const [open, candidates] = await Promise.all([
      store.pollingSet(),
      store.confirmationCandidates(this.now()),
    ]);
    const confirms = await this.confirming.owed(candidates);
    const work: Work[] = [
      ...confirms.map((swap) => ({ swap, kind: 'confirm' as const })),
      ...open.map((swap) => ({ swap, kind: 'poll' as const })),
    ];
    this.regular.retain(open, new Set(work.map((w) => keyOf(w.swap))));
    const byProvider = new Map<string, Work[]>();
    for (const w of work) {
      const list = byProvider.get(w.swap.providerId) ?? [];
      list.push(w);
      byProvider.set(w.swap.providerId, list);
    }

    const round = await this.rounds.work(
      [...byProvider].map(([provider, items]) => this.group(provider, items)),
    );
    for (const t of round.troubles) logger.warn({ provider: t.group, err: t.error }, TROUBLE[t.step]);
    for (const f of round.failed)
      logger.warn(
        { provider: f.item.swap.providerId, swapId: f.item.swap.swapId, err: f.error },
        'poll failed',
      );
    const report: TickReport = {
      polled: round.worked.length + round.failed.length,
      appended: round.worked.filter((w) => w.outcome === 'appended').length,
      confirmed: round.worked.filter(
        ({ item, outcome }) =>
          item.kind === 'confirm' && outcome !== 'error' && outcome !== 'rate_limited' && outcome !== 'taken',
      ).length,
      deferred: round.deferred,
      leased: round.leased,
      setSize: open.length,
    };
    this.metrics.setSize.set(open.length);
    await this.countExpiredWithMoney();
    this.metrics.pausedProviders.set(this.pauses.count());
    if (report.polled > 0 || report.deferred > 0) logger.debug(report, 'poller tick');
    return report;
  }

  /**
   * A provider's due swaps in a tick: worked only while the provider is readable, enabled and not paused; a
   * token is taken for each before it starts (a swap another poller holds takes none), and the rest wait for
   * a later tick once the bucket is empty. A lease goes back no sooner than the provider's pause.
   */
  private group(provider: string, items: Work[]): WorkGroup<Work, PollOutcome> {
    return {
      name: provider,
      lanes: [
        this.confirming.lane<Work>(items.filter((w) => w.kind === 'confirm')),
        this.regular.lane<Work>(items.filter((w) => w.kind === 'poll')),
      ],
      open: async () => {
        const partner = await this.options.partners.get(provider).catch((e: unknown) => {
          this.options.logger.warn({ provider, err: e }, 'provider unreadable');
          return undefined;
        });
        if (!partner || !partner.setup.enabled || this.pauses.paused(provider)) return undefined;
        return {
          concurrency: this.options.concurrency,
          admit: () =>
            !this.pauses.paused(provider) && this.limiter.take(provider, this.options.rateLimit).allowed,
          notBefore: () => this.pauses.of(provider),
          work: (w) =>
            w.kind === 'confirm'
              ? this.confirming.confirmOne(partner, w.swap)
              : this.regular.pollOne(partner, w.swap),
        };
      },
    };
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
}
