import { RateLimitedError, SwapNotFoundError } from '../partner/errors.ts';
import type { SwapStatus } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { pollReport } from '../swap/report.ts';
import { mapStatus } from '../swap/status.ts';
import type { WorkLane } from '../work/round.ts';
import { DueSchedule } from '../work/schedule.ts';
import { changesOf, reportFingerprint, type PolledSwap } from './change.ts';
import { appendReport, counted, keyOf, reportEvent, type PollContext, type PollOutcome } from './polling.ts';

/** How much slower than the provider's interval a closed (reopenable) swap is polled. */
export const CLOSED_POLL_SLOWDOWN = 10;

/**
 * The regular polls of the polling set (swaps not final, and the gateway's created swaps not projected
 * yet). A swap is due one provider interval after an answer (CLOSED_POLL_SLOWDOWN times that while closed);
 * an error, a 404 or an unmappable status backs it off (DueSchedule). A result is appended as
 * StatusReported (source poll) only when the projector would change something (changesOf), and not twice
 * while the projection has not moved. In memory only (lost on restart, harmlessly): the next poll times,
 * the backoffs, the last report appended per swap.
 */
export class RegularPolls {
  private readonly schedule: DueSchedule;
  private readonly lastAppended = new Map<string, { fingerprint: string; version: number | null }>();

  constructor(private readonly poll: PollContext) {
    this.schedule = new DueSchedule(poll.options.backoff);
  }

  /** Forgets swaps that left the polling set, and the reports of swaps no longer listed at all. */
  retain(open: readonly PolledSwap[], listed: ReadonlySet<string>): void {
    this.schedule.retain(new Set(open.map(keyOf)));
    for (const id of this.lastAppended.keys()) if (!listed.has(id)) this.lastAppended.delete(id);
  }

  /** A provider's regular polls in a round: due by the swap's schedule, released until it is due again. */
  lane<W extends { readonly swap: PolledSwap }>(items: readonly W[]): WorkLane<W> {
    return { items, key: (w) => keyOf(w.swap), schedule: this.schedule };
  }

  async pollOne(partner: ProviderPartner, swap: PolledSwap): Promise<PollOutcome> {
    const { logger } = this.poll.options;
    const { metrics } = this.poll;
    const provider = swap.providerId;
    const key = keyOf(swap);
    // A closed swap (EXPIRED) is polled slowly: a late deposit is rare, but it moves money when it comes.
    const interval =
      partner.setup.pollIntervalSeconds * 1000 * (swap.statusClass === 'closed' ? CLOSED_POLL_SLOWDOWN : 1);
    const count = (outcome: PollOutcome) => counted(this.poll, provider, outcome);
    let status: SwapStatus;
    try {
      status = await partner.client.status(swap.swapId);
    } catch (e) {
      if (e instanceof RateLimitedError) return count(this.poll.pauses.rateLimited(provider, e));
      const wait = this.schedule.failed(key, this.poll.now(), interval);
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
      const wait = this.schedule.failed(key, this.poll.now(), interval);
      metrics.unmappable.inc({ provider });
      logger.warn(
        { provider, swapId: swap.swapId, providerStatus: status.status.slice(0, 100), retryInMs: wait },
        'polled status is not in the provider mapping; nothing appended, the swap stays in the polling set',
      );
      return count('unmappable');
    }
    this.schedule.succeeded(key, this.poll.now(), interval);
    const payload = pollReport(mapped, status);
    const changes = changesOf(swap, payload);
    if (changes.length === 0) return count('unchanged');
    const fingerprint = reportFingerprint(payload);
    const memo = this.lastAppended.get(key);
    if (memo && memo.fingerprint === fingerprint && memo.version === swap.version) {
      return count('awaiting_projection'); // appended already; the projector has not folded it yet
    }
    try {
      await appendReport(this.poll, reportEvent(this.poll, swap, payload));
    } catch (e) {
      const wait = this.schedule.failed(key, this.poll.now(), interval);
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
}
