import { RateLimitedError, SwapNotFoundError } from '../partner/errors.ts';
import type { SwapStatus } from '../partner/types.ts';
import type { ProviderPartner } from '../providers/clients.ts';
import { pollReport } from '../swap/report.ts';
import { mapStatus } from '../swap/status.ts';
import type { WorkLane } from '../work/round.ts';
import { DueSchedule } from '../work/schedule.ts';
import { changesOf, type PolledSwap } from './change.ts';
import {
  CONFIRM_BACKOFF,
  CONFIRM_DEADLINE_HOURS,
  confirmationDeadline,
  judgeConfirmation,
  missingFigures,
  nextConfirmationAt,
} from './confirm.ts';
import { appendReport, counted, keyOf, reportEvent, type PollContext, type PollOutcome } from './polling.ts';
import type { ConfirmCandidate, ConfirmationOutcome } from './set.ts';

/**
 * The confirming polls: a final swap with a figure its outcome needs still unknown (one made final by webhook
 * above all) is asked GET /status until the partner reports its final status with every needed figure
 * (confirm.ts). Their schedule is their own, in platform.poll_confirmations, never the swap's regular one:
 * the first is due at once; each answer that is not a complete confirmation asks again after a backoff, up to
 * the deadline, where the swap is given up with its missing figures (outcome `deadline`, logged at warn,
 * counted). An attempt is recorded before its StatusReported is appended, conditionally (set.ts
 * recordConfirmation), so two pollers of one provider never both append it. In memory only: the backoff of
 * attempts that got no answer.
 */
export class ConfirmingPolls {
  /** Backoff of confirming polls that got no answer (network or partner error); answers are scheduled in Postgres. */
  private readonly errors: DueSchedule;
  private readonly deadlineMs: number;
  private readonly backoff: { readonly baseMs: number; readonly maxMs: number };

  constructor(private readonly poll: PollContext) {
    const { options } = poll;
    this.errors = new DueSchedule(options.backoff);
    this.deadlineMs = options.confirm?.deadlineMs ?? CONFIRM_DEADLINE_HOURS * 3_600_000;
    this.backoff = options.confirm?.backoff ?? CONFIRM_BACKOFF;
  }

  /**
   * The candidates still owed a confirming poll. Past its deadline a swap is given up here, without another
   * poll (one never asked gets its one poll first).
   */
  async owed(candidates: readonly ConfirmCandidate[]): Promise<ConfirmCandidate[]> {
    const owed: ConfirmCandidate[] = [];
    for (const c of candidates) {
      if (c.attempts > 0 && this.poll.now() >= this.deadlineOf(c)) await this.abandon(c);
      else owed.push(c);
    }
    this.errors.retain(new Set(owed.map(keyOf)));
    return owed;
  }

  /**
   * A provider's confirming polls in a round. Due by its own record (the store lists only those due) unless
   * an error backs it off, never by the swap's regular schedule: a swap polled a moment before its final
   * webhook is confirmed at the next tick. So its lease is claimed whenever no one holds the swap, and
   * released due at once: its next time is in platform.poll_confirmations.
   */
  lane<W extends { readonly swap: PolledSwap }>(items: readonly W[]): WorkLane<W> {
    return { items, key: (w) => keyOf(w.swap), schedule: this.errors, anyIdle: true, nextAt: () => 0 };
  }

  private deadlineOf(swap: ConfirmCandidate): number {
    return confirmationDeadline(swap.finalAt, this.deadlineMs);
  }

  /**
   * One confirming GET /status. An answer that changes the swap (fills a figure, or contradicts it) is
   * appended as a regular poll's is; whatever it is, it is recorded first, conditionally (false: another
   * poller recorded this attempt, nothing is appended). Only the swap's final status with every needed figure
   * ends the confirming; a stale, blank, partial or unknown answer, or a 404, asks again after the backoff.
   */
  async confirmOne(partner: ProviderPartner, swap: ConfirmCandidate): Promise<PollOutcome> {
    const { logger } = this.poll.options;
    const provider = swap.providerId;
    const key = keyOf(swap);
    const count = (outcome: PollOutcome) => counted(this.poll, provider, outcome);
    const unknown = { complete: false, missing: missingFigures(swap, swap.status) };
    try {
      let status: SwapStatus;
      try {
        status = await partner.client.status(swap.swapId);
      } catch (e) {
        if (e instanceof RateLimitedError) return count(this.poll.pauses.rateLimited(provider, e));
        if (e instanceof SwapNotFoundError) {
          logger.warn(
            { provider, swapId: swap.swapId, attempts: swap.attempts + 1 },
            'partner does not know the swap it made final (404); confirming goes on',
          );
          const taken = await this.recordAttempt(swap, 'not_found', unknown, 'GET /status answered 404');
          return count(taken ? 'not_found' : 'taken');
        }
        const wait = this.errors.failed(key, this.poll.now(), 0);
        logger.warn({ provider, swapId: swap.swapId, retryInMs: wait, err: e }, 'confirming poll failed');
        return count('error');
      }
      this.errors.succeeded(key, this.poll.now(), 0);

      const mapped = mapStatus(partner.setup.statusMapping, status.status);
      if (!mapped) {
        this.poll.metrics.unmappable.inc({ provider });
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
      const event = reportEvent(this.poll, swap, payload);
      if (!(await this.recordAttempt(swap, 'appended', judged, changes.join(','), event.eventId)))
        return count('taken');
      try {
        await appendReport(this.poll, event);
      } catch (e) {
        const wait = this.errors.failed(key, this.poll.now(), 0);
        await this.poll.options.store.reopenConfirmation({
          swapId: swap.swapId,
          providerId: provider,
          attempts: swap.attempts + 1,
          detail: `not appended: ${(e as Error).message}`,
          at: this.poll.now(),
        });
        logger.warn(
          { provider, swapId: swap.swapId, retryInMs: wait, err: e },
          'confirming poll result not appended',
        );
        return count('error');
      }
      this.poll.metrics.appended.inc({ provider });
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
      const wait = this.errors.failed(key, this.poll.now(), 0);
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
    const { logger, store } = this.poll.options;
    const at = this.poll.now();
    const attempts = swap.attempts + 1;
    const taken = await store.recordConfirmation({
      swapId: swap.swapId,
      providerId: swap.providerId,
      seenAttempts: swap.attempts,
      outcome,
      state: judged.complete ? 'confirmed' : 'confirming',
      nextDueAt: judged.complete
        ? null
        : nextConfirmationAt(at, attempts, this.deadlineOf(swap), this.backoff),
      missing: judged.missing,
      at,
      ...(detail !== undefined ? { detail } : {}),
      ...(eventId !== undefined ? { eventId } : {}),
    });
    const log = { provider: swap.providerId, swapId: swap.swapId, outcome, attempts };
    if (!taken) logger.debug(log, 'another poller recorded this confirming poll first');
    else {
      this.poll.metrics.confirmations.inc({ provider: swap.providerId, outcome });
      if (judged.complete) logger.info(log, 'swap confirmed: GET /status reported every figure');
    }
    return taken;
  }

  /**
   * The deadline passed before a complete answer: confirming stops, the figures the outcome needs and no
   * report gave are recorded as never reported (platform.confirmations_never_reported lists the swap).
   */
  private async abandon(swap: ConfirmCandidate): Promise<void> {
    const { logger, store } = this.poll.options;
    const missing = missingFigures(swap, swap.status);
    const provider = swap.providerId;
    try {
      const taken = await store.recordConfirmation({
        swapId: swap.swapId,
        providerId: provider,
        seenAttempts: swap.attempts,
        outcome: 'deadline',
        state: 'abandoned',
        nextDueAt: null,
        missing,
        at: this.poll.now(),
        detail: `no complete GET /status within ${this.deadlineMs / 3_600_000} h of the final status`,
      });
      if (!taken) return;
    } catch (e) {
      logger.warn({ provider, swapId: swap.swapId, err: e }, 'confirmation deadline not recorded');
      return;
    }
    this.poll.metrics.confirmations.inc({ provider, outcome: 'deadline' });
    this.poll.metrics.confirmationsAbandoned.inc({ provider });
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
