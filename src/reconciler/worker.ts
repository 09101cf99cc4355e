import type pg from 'pg';
import cron, { type ScheduledTask } from 'node-cron';
import type { EventAppender } from '../events/producer.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry } from '../observability/metrics.ts';
import { contextFromTraceParent, SpanKind, withSpan } from '../observability/tracing.ts';
import type { ChainSources } from '../chain/config.ts';
import { Claims, IN_FLIGHT_MS, type Round } from './claims.ts';
import { verdictRecorder, type RecordedVerdict } from './metrics.ts';
import { RoundJudge, type EncodedVerdict } from './rounds.ts';
import { failingChecks, judgeSwap, type JudgedSwap } from './judging.ts';
import { finalSwapsSince, loadSwaps, ReconcileError, verdictHistory, type LoadedSwap } from './loading.ts';
import type { ReconciliationPolicy } from './policy.ts';

export interface ReconcilerOptions {
  /** search_path = the live projection schema. */
  projection: pg.Pool;
  /** Any pool of the same database: the provider registry (keys) lives in schema `platform`. */
  platform: pg.Pool;
  appender: EventAppender;
  policy: ReconciliationPolicy;
  logger: Logger;
  metrics?: MetricsRegistry;
  /** Swaps taken from the queue per round (default 500): judged together, their verdicts appended together. */
  batchSize?: number;
  /**
   * A swap made final by webhook is judged only after its confirming poll (the webhook carries no payout
   * network fee), or once it has waited this long: deferred, never judged UNVERIFIABLE for good.
   */
  confirmWaitMs?: number;
  /**
   * Threads that judge and encode the verdicts of queue rounds and sweeps beside the event loop (default 0:
   * judged on it).
   * One already takes most of a swap's CPU off the loop; `reconciler run` takes RECONCILER_JUDGE_THREADS.
   */
  judgeThreads?: number;
  /**
   * How long a judged swap stays claimed, so that neither this reconciler nor another takes it again
   * before its verdict is folded (default 60 s; then it is taken again, as appended yet never folded).
   */
  holdMs?: number;
  /** The chain sources configured (CHAIN_SOURCES_FILE); absent: no chain evidence is read or judged. */
  chainSources?: ChainSources;
  /** Called after each verdict is appended (metrics). */
  onVerdict?: (v: RecordedVerdict) => void;
}

/** A swap's checks and its verdict event, appended or not yet (`check`, then `record`). */
export interface SwapReconciliation extends JudgedSwap {
  /** When the swap became final, ms since the epoch (the verdict's latency metric), if known. */
  finalAtMs: number | null;
}

/**
 * Takes final (or corrected) swaps from the reconciliation queue that the projector fills in the
 * transaction that made them final, checks them, and appends SwapReconciled. The queue is committed
 * state, so the reconciler never races the projector. Several reconcilers share the queue: a round claims
 * its rows (platform.reconciliation_claims) in a short transaction under an advisory lock, and the claim
 * keeps the others off them until their verdicts are folded (the queue rows go) or its time is up. Within a
 * process, its in-flight set does the same for its two lanes.
 */
export class Reconciler {
  /** Counts an appended verdict and says it in a log line (a mismatch at warn with its checks). */
  private readonly recorded: (v: RecordedVerdict) => void;
  private timer: NodeJS.Timeout | undefined;
  private sweep: ScheduledTask | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopping = false;
  /** The judging of rounds: in judge threads, or on the event loop. */
  private readonly judging: RoundJudge;

  /** Who judges which swap: this reconciler's claims, its in-flight set and its pass over the queue. */
  private readonly claims: Claims;

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  /** The projection this reconciler reads (search_path = the live schema). */
  get projection(): pg.Pool {
    return this.options.projection;
  }

  constructor(private readonly options: ReconcilerOptions) {
    this.claims = new Claims(options.projection, options.logger, options.holdMs ?? IN_FLIGHT_MS);
    this.recorded = verdictRecorder(options.metrics, options.logger, options.onVerdict);
    const threadsLost = options.metrics?.counter(
      'swap_ledger_reconciler_judge_threads_lost_total',
      'Judge threads that died or exited (their swaps stay queued; a new thread judges the next round)',
    );
    this.judging = new RoundJudge({
      threads: options.judgeThreads ?? 0,
      policy: options.policy,
      writerSchemaId: () => options.appender.writerSchemaId(),
      onThreadLost: (e) => {
        threadsLost?.inc();
        options.logger.error(
          { err: e },
          'a judge thread was lost: its swaps stay queued, a new thread judges the next round',
        );
      },
    });
  }

  /** Checks one swap against its signed payload; appends nothing. */
  async check(ref: SwapRef, basedOnEventId?: string): Promise<SwapReconciliation> {
    const loaded = (
      await loadSwaps(this.options.projection, this.options.platform, [ref], this.options.chainSources)
    ).get(formatSwapRef(ref))!;
    if (loaded instanceof ReconcileError) throw loaded;
    return this.judge({ ...loaded, basedOnEventId: basedOnEventId ?? loaded.basedOnEventId });
  }

  /** The checks of one loaded swap on the event loop (CPU only: the signature and the amounts). */
  private async judge(s: LoadedSwap): Promise<SwapReconciliation> {
    return { ...(await judgeSwap(s, this.options.policy)), finalAtMs: s.finalAtMs };
  }

  /**
   * Starts the judge threads and waits until they answer, so that the first round does not wait for their
   * loading (`start` does it; a caller that drains by itself may).
   */
  async prepare(): Promise<void> {
    await this.judging.ready();
  }

  /** Appends the verdict, and says it in a metric and a log line. */
  async record(r: SwapReconciliation): Promise<void> {
    await this.options.appender.append(r.event);
    this.recorded({
      swapId: r.swapId,
      providerId: r.providerId,
      basedOnEventId: r.basedOnEventId,
      verdict: r.result.verdict,
      failing: failingChecks(r.result),
      eventId: r.event.eventId,
      occurredAt: r.event.occurredAt,
      finalAtMs: r.finalAtMs,
    });
  }

  /**
   * One round over the queue; returns how many swaps were reconciled. The round's swaps are claimed, read
   * together (loadSwaps), judged in the judge threads (or on the event loop) and appended, each in its own
   * span: their appends share produce requests, so a round costs a few queries and about one Kafka round
   * trip, not that per swap.
   */
  async drainQueue(): Promise<number> {
    const client = await this.options.projection.connect();
    let round: Round | undefined;
    const judged = new Set<string>();
    try {
      round = await this.claims.takeRound(client, this.batchSize, this.options.confirmWaitMs ?? 120_000);
      // On the round's own connection (outside any transaction: the claim is committed).
      const refs = round.rows.map((r) => ({ providerId: r.provider_id, swapId: r.swap_id }));
      const loaded = await loadSwaps(client, this.options.platform, refs, this.options.chainSources);
      // Each swap is judged based on the queue row's event: the final status or correction that queued it.
      const verdictOf = await this.judging.judgeClaimed(
        loaded,
        round.rows.map((r, i) => ({ ref: refs[i]!, basedOnEventId: r.queued_by_event_id })),
      );
      const done = await Promise.all(
        round.rows.map(async (row, i) => {
          try {
            const swap = loaded.get(formatSwapRef(refs[i]!))!;
            if (swap instanceof ReconcileError) throw swap;
            const basedOn = row.queued_by_event_id;
            await this.appendVerdict(swap, verdictOf.get(basedOn)!, basedOn, row.trace_parent);
            judged.add(basedOn);
            // The wait for the projector starts once the verdict is appended, not when the round began.
            this.claims.hold(row);
            return 1;
          } catch (e) {
            this.options.logger.error(
              { err: e, provider: row.provider_id, swapId: row.swap_id },
              'reconciliation failed; the swap stays queued',
            );
            return 0;
          }
        }),
      );
      return done.reduce<number>((a, b) => a + b, 0);
    } catch (e) {
      this.claims.endPass();
      throw e;
    } finally {
      client.release();
      if (round) await this.claims.release(round, judged);
    }
  }

  /**
   * Drains what is queued: rounds follow one another at once while they come back full, in two lanes, so
   * that one round judges while the other waits on its queries or Kafka's acknowledgement (the in-flight
   * set keeps their swaps apart). Returns how many swaps were judged.
   */
  async drainAll(): Promise<number> {
    let judged = 0;
    let failed = false;
    const lane = async () => {
      try {
        for (;;) {
          const n = await this.drainQueue();
          judged += n;
          if (this.stopping || failed || n < this.batchSize) return;
        }
      } catch (e) {
        failed = true;
        throw e;
      }
    };
    // Both lanes end before this returns, a failed one included: nothing runs on once the caller moves on.
    const lanes = await Promise.allSettled([lane(), lane()]);
    for (const l of lanes) if (l.status === 'rejected') throw l.reason;
    return judged;
  }

  /**
   * Appends a judged swap's verdict in a `reconcile` span. For a queued swap the span is a child of the
   * message that queued it (a consumer processing one message: the verdict is caused by that request), so
   * the trace runs from the gateway or webhook through the projector into the verdict; its append carries
   * the same trace on to the fold. The span waits for the swap's judging (in a judge thread, or on the
   * event loop).
   */
  private appendVerdict(
    swap: LoadedSwap,
    judged: Promise<EncodedVerdict>,
    basedOnEventId: string,
    traceParent: string | null,
  ): Promise<void> {
    const parent = contextFromTraceParent(traceParent);
    return withSpan(
      'reconcile',
      {
        kind: SpanKind.CONSUMER,
        ...(parent ? { parent } : {}),
        attributes: { 'swap_ledger.based_on_event_id': basedOnEventId },
      },
      async (span) => {
        const v = await judged;
        span.setAttribute('swap_ledger.verdict', v.verdict);
        await this.options.appender.appendEncoded({
          eventId: v.eventId,
          eventType: 'SwapReconciled',
          aggregateKey: v.aggregateKey,
          value: v.value,
        });
        this.recorded({
          swapId: swap.ref.swapId,
          providerId: swap.row.provider_id,
          basedOnEventId: v.basedOnEventId,
          verdict: v.verdict,
          failing: v.failing,
          eventId: v.eventId,
          occurredAt: v.occurredAt,
          finalAtMs: swap.finalAtMs,
        });
      },
    );
  }

  /**
   * Final swaps that have no verdict and are not queued (e.g. finalised before the reconciler existed), and
   * those whose confirmation was given up after their verdict (judged again on the same event, their missing
   * figures now "never reported"): queued ones are the queue's business. They are claimed like a round's, by the event their verdict is
   * based on, so that two reconcilers' sweeps (the same cron) judge each once; every live claim is skipped,
   * this reconciler's own too (its last sweep's verdicts may not be folded yet). A sweep's claim is left to
   * expire.
   */
  async sweepMissed(limit = 1000): Promise<number> {
    const { id: round, missed } = await this.claims.takeMissed(limit);
    const refs = missed.map((r) => ({ providerId: r.provider_id, swapId: r.swap_id }));
    const loaded = await loadSwaps(
      this.options.projection,
      this.options.platform,
      refs,
      this.options.chainSources,
    );
    // Judged like a queue round, in the judge threads when there are any: up to `limit` swaps at once
    // would otherwise hold the event loop.
    const verdictOf = await this.judging.judgeClaimed(
      loaded,
      missed.map((m, i) => ({ ref: refs[i]!, basedOnEventId: m.based_on })),
    );
    const failed: string[] = [];
    const done = await Promise.allSettled(
      missed.map(async ({ based_on }, i) => {
        try {
          const swap = loaded.get(formatSwapRef(refs[i]!))!;
          if (swap instanceof ReconcileError) throw swap;
          // A sweep has no message that caused it: its span is a root.
          await this.appendVerdict(swap, verdictOf.get(based_on)!, based_on, null);
        } catch (e) {
          failed.push(based_on);
          throw e;
        }
      }),
    );
    // What failed may be taken at once, by the next sweep or another reconciler's.
    if (failed.length > 0) await this.claims.unclaim(round, failed);
    // Every append has ended (none left running past the sweep); the first failure is the sweep's.
    for (const d of done) if (d.status === 'rejected') throw d.reason;
    return missed.length;
  }

  /** Final swaps that became final at or after `since`, oldest first (for `reconcile --since`). */
  finalSwapsSince(since: Date): Promise<SwapRef[]> {
    return finalSwapsSince(this.options.projection, since);
  }

  /** Every verdict recorded for a swap, oldest first (the last is the current one). */
  history(ref: SwapRef): ReturnType<typeof verdictHistory> {
    return verdictHistory(this.options.projection, ref);
  }

  /** Deletes claims long past their time (their reconciler stopped or died before deleting them). */
  forgetStaleClaims(): Promise<number> {
    return this.claims.forgetStaleClaims();
  }

  /** Drains the queue every `intervalMs` and sweeps on the cron schedule, one round at a time. */
  start(intervalMs: number, sweepCron: string): void {
    const serial = (fn: () => Promise<unknown>) => {
      this.running = this.running
        .then(fn)
        .catch((e) => this.options.logger.error({ err: e }, 'reconciler round failed'));
    };
    serial(() => this.prepare());
    this.timer = setInterval(() => serial(() => this.drainAll()), intervalMs);
    this.sweep = cron.schedule(sweepCron, () =>
      serial(() => Promise.all([this.sweepMissed(), this.forgetStaleClaims()])),
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweep?.stop();
    await this.running;
    await this.judging.close();
  }
}
