import type pg from 'pg';
import cron, { type ScheduledTask } from 'node-cron';
import { newEvent } from '../events/keys.ts';
import type { EventAppender } from '../events/producer.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import { reportValuesOfRow } from '../swap/report.ts';
import type { SwapCreated, SwapEventOf } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry, Counter } from '../observability/metrics.ts';
import { contextFromTraceParent, SpanKind, withSpan } from '../observability/tracing.ts';
import { readProviderSetup } from '../providers/reads.ts';
import { toSwapReconciled } from './checks.ts';
import { creationFactsFromSwapCreated, finalReportFromSwapRow, inspectAndReconcile } from './facts.ts';
import type { ReconciliationPolicy } from './policy.ts';
import type { ReconciliationResult } from './types.ts';

export interface ReconcilerOptions {
  /** search_path = the live projection schema. */
  projection: pg.Pool;
  /** Any pool of the same database: the provider registry (keys) lives in schema `platform`. */
  platform: pg.Pool;
  appender: EventAppender;
  policy: ReconciliationPolicy;
  logger: Logger;
  metrics?: MetricsRegistry;
  /** Swaps taken from the queue per round. */
  batchSize?: number;
  /**
   * A swap made final by webhook is judged only after its confirming poll (the webhook carries no payout
   * network fee), or once it has waited this long: deferred, never judged UNVERIFIABLE for good.
   */
  confirmWaitMs?: number;
  /** Called after each verdict is appended (metrics). */
  onVerdict?: (r: SwapReconciliation) => void;
}

export interface SwapReconciliation {
  swapId: string;
  providerId: string;
  basedOnEventId: string;
  result: ReconciliationResult;
  event: SwapEventOf<'SwapReconciled'>;
}

export class ReconcileError extends Error {
  override name = 'ReconcileError';
}

/**
 * Takes final (or corrected) swaps from the reconciliation queue that the projector fills in the
 * transaction that made them final, checks them, and appends SwapReconciled. The queue is committed
 * state, so the reconciler never races the projector; rows are taken FOR UPDATE SKIP LOCKED, so several
 * reconcilers share the work. A queue row goes when the projector folds the verdict.
 */
export class Reconciler {
  private readonly verdicts: Counter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweep: ScheduledTask | undefined;
  private running: Promise<unknown> = Promise.resolve();
  /** Verdicts appended but perhaps not folded yet: not taken again meanwhile. */
  private readonly inFlight = new Map<string, number>();

  /** The projection this reconciler reads (search_path = the live schema). */
  get projection(): pg.Pool {
    return this.options.projection;
  }

  constructor(private readonly options: ReconcilerOptions) {
    this.verdicts = options.metrics?.counter(
      'swap_ledger_reconciliation_verdicts_total',
      'Swaps reconciled, by provider and verdict',
      ['provider', 'verdict'],
    );
  }

  /** Checks one swap against its signed payload; appends nothing. */
  async check(ref: SwapRef, basedOnEventId?: string): Promise<SwapReconciliation> {
    const { projection } = this.options;
    const { providerId, swapId } = ref;
    const ids = [providerId, swapId];
    const swap = await projection.query('select * from swaps where provider_id = $1 and swap_id = $2', ids);
    const row = swap.rows[0];
    if (!row) throw new ReconcileError(`no swap ${formatSwapRef(ref)} in the projection`);
    const created = await projection.query<{ payload: SwapCreated }>(
      `select payload from event_journal where provider_id = $1 and swap_id = $2 and event_type = 'SwapCreated'
       and outcome = 'applied'`,
      ids,
    );
    if (!created.rows[0])
      throw new ReconcileError(`swap ${formatSwapRef(ref)} has no applied SwapCreated in the journal`);
    const conflicts = await projection.query<{
      field: string;
      final_value: string | null;
      reported_value: string | null;
      event_id: string;
      source: string;
    }>(
      `select field, final_value, reported_value, event_id, source from status_conflicts
       where provider_id = $1 and swap_id = $2 order by occurred_at, conflict_id`,
      ids,
    );
    const setup = await readProviderSetup(this.options.platform, row.provider_id);
    const result = await inspectAndReconcile(
      {
        creation: creationFactsFromSwapCreated(created.rows[0].payload),
        final: finalReportFromSwapRow({
          status: row.status,
          final: row.final,
          ...reportValuesOfRow(row),
        }),
        conflicts: conflicts.rows.map((c) => ({
          field: c.field,
          finalValue: c.final_value,
          reportedValue: c.reported_value,
          eventId: c.event_id,
          source: c.source,
        })),
        providerDefaultSlippage: setup?.defaultSlippage ?? null,
      },
      setup?.payloadKeys ?? [],
      this.options.policy,
    );
    const based =
      basedOnEventId ?? (row.last_correction_event_id as string | null) ?? (row.last_event_id as string);
    const event = newEvent('SwapReconciled', new Date(), toSwapReconciled(result, based), {
      providerId,
      swapId,
      source: 'reconciler',
    });
    return { swapId, providerId: row.provider_id, basedOnEventId: based, result, event };
  }

  /** Appends the verdict, and says it in a metric and a log line (a mismatch at warn, with its checks). */
  async record(r: SwapReconciliation): Promise<void> {
    await this.options.appender.append(r.event);
    this.verdicts?.inc({ provider: r.providerId, verdict: r.result.verdict });
    this.options.onVerdict?.(r);
    const failing = r.result.checks.filter((c) => c.verdict === 'MISMATCH' || c.verdict === 'UNVERIFIABLE');
    const fields = {
      swapId: r.swapId,
      provider: r.providerId,
      verdict: r.result.verdict,
      basedOn: r.basedOnEventId,
    };
    if (r.result.verdict === 'MISMATCH') {
      this.options.logger.warn({ ...fields, failing }, 'swap reconciled: MISMATCH');
    } else if (r.result.verdict === 'UNVERIFIABLE') {
      this.options.logger.info(
        { ...fields, unverifiable: failing.map((c) => c.name) },
        'swap reconciled: UNVERIFIABLE',
      );
    } else {
      this.options.logger.info(fields, `swap reconciled: ${r.result.verdict}`);
    }
  }

  /** One round over the queue; returns how many swaps were reconciled. */
  async drainQueue(): Promise<number> {
    const client = await this.options.projection.connect();
    let done = 0;
    try {
      await client.query('begin');
      // A swap made final by webhook waits for its confirming poll (platform.poll_confirmations), at most
      // confirmWaitMs after it became final.
      const rows = await client.query<{
        provider_id: string;
        swap_id: string;
        queued_by_event_id: string;
        trace_parent: string | null;
      }>(
        `select q.provider_id, q.swap_id, q.queued_by_event_id, q.trace_parent from reconciliation_queue q
         join swaps s on s.provider_id = q.provider_id and s.swap_id = q.swap_id
         where not exists (select 1 from reconciliations r
                           where r.provider_id = q.provider_id and r.swap_id = q.swap_id
                             and r.based_on_event_id = q.queued_by_event_id)
           and not (s.final and s.final_at > now() - make_interval(secs => $2::double precision / 1000)
                    and exists (select 1 from event_journal j
                                where j.provider_id = s.provider_id and j.swap_id = s.swap_id
                                  and j.event_type = 'StatusReported' and j.outcome = 'applied'
                                  and j.source = 'webhook' and j.changes ? 'final')
                    and not exists (select 1 from platform.poll_confirmations c
                                    where c.provider_id = s.provider_id and c.swap_id = s.swap_id))
         order by q.queued_at, q.provider_id, q.swap_id limit $1 for update of q skip locked`,
        [this.options.batchSize ?? 100, this.options.confirmWaitMs ?? 120_000],
      );
      for (const { provider_id, swap_id, queued_by_event_id, trace_parent } of rows.rows) {
        const ref = { providerId: provider_id, swapId: swap_id };
        const flight = `${formatSwapRef(ref)}/${queued_by_event_id}`;
        if ((this.inFlight.get(flight) ?? 0) > Date.now()) continue;
        try {
          await this.judgeQueued(ref, queued_by_event_id, trace_parent);
          this.inFlight.set(flight, Date.now() + 60_000);
          done++;
        } catch (e) {
          this.options.logger.error(
            { err: e, provider: provider_id, swapId: swap_id },
            'reconciliation failed; the swap stays queued',
          );
        }
      }
      await client.query('commit');
    } catch (e) {
      await client.query('rollback').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
    for (const [k, until] of this.inFlight) if (until <= Date.now()) this.inFlight.delete(k);
    return done;
  }

  /**
   * Judges a queued swap in a `reconcile` span that is a child of the message that queued it (a consumer
   * processing one message: the verdict is caused by that request), so the trace runs from the gateway or
   * webhook through the projector into the verdict; its append carries the same trace on to the fold.
   */
  private judgeQueued(ref: SwapRef, basedOnEventId: string, traceParent: string | null): Promise<void> {
    const parent = contextFromTraceParent(traceParent);
    return withSpan(
      'reconcile',
      {
        kind: SpanKind.CONSUMER,
        ...(parent ? { parent } : {}),
        attributes: { 'swap_ledger.based_on_event_id': basedOnEventId },
      },
      async (span) => {
        const r = await this.check(ref, basedOnEventId);
        span.setAttribute('swap_ledger.verdict', r.result.verdict);
        await this.record(r);
      },
    );
  }

  /**
   * Final swaps that have no verdict and are not queued (e.g. finalised before the reconciler existed):
   * queued ones are the queue's business.
   */
  async sweepMissed(limit = 1000): Promise<number> {
    const missed = await this.options.projection.query<{ provider_id: string; swap_id: string }>(
      `select s.provider_id, s.swap_id from swaps s
       where s.final
         and not exists (select 1 from reconciliations r
                         where r.provider_id = s.provider_id and r.swap_id = s.swap_id)
         and not exists (select 1 from reconciliation_queue q
                         where q.provider_id = s.provider_id and q.swap_id = s.swap_id)
       order by s.final_at limit $1`,
      [limit],
    );
    for (const r of missed.rows)
      await this.record(await this.check({ providerId: r.provider_id, swapId: r.swap_id }));
    return missed.rowCount ?? 0;
  }

  /** Final swaps that became final at or after `since`, oldest first (for `reconcile --since`). */
  async finalSwapsSince(since: Date): Promise<SwapRef[]> {
    const r = await this.options.projection.query<{ provider_id: string; swap_id: string }>(
      'select provider_id, swap_id from swaps where final and final_at >= $1 order by final_at, provider_id, swap_id',
      [since.toISOString()],
    );
    return r.rows.map((row) => ({ providerId: row.provider_id, swapId: row.swap_id }));
  }

  /** Every verdict recorded for a swap, oldest first (the last is the current one). */
  async history(
    ref: SwapRef,
  ): Promise<{ verdict: string; reconciledAt: string; basedOnEventId: string; eventId: string }[]> {
    const r = await this.options.projection.query<{
      verdict: string;
      reconciled_at: string;
      based_on_event_id: string;
      event_id: string;
    }>(
      `select verdict, reconciled_at, based_on_event_id, event_id from reconciliation_history
       where provider_id = $1 and swap_id = $2 order by reconciled_at, event_id`,
      [ref.providerId, ref.swapId],
    );
    return r.rows.map((h) => ({
      verdict: h.verdict,
      reconciledAt: h.reconciled_at,
      basedOnEventId: h.based_on_event_id,
      eventId: h.event_id,
    }));
  }

  /** Drains the queue every `intervalMs` and sweeps on the cron schedule, one round at a time. */
  start(intervalMs: number, sweepCron: string): void {
    const serial = (fn: () => Promise<unknown>) => {
      this.running = this.running
        .then(fn)
        .catch((e) => this.options.logger.error({ err: e }, 'reconciler round failed'));
    };
    this.timer = setInterval(() => serial(() => this.drainQueue()), intervalMs);
    this.sweep = cron.schedule(sweepCron, () => serial(() => this.sweepMissed()));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweep?.stop();
    await this.running;
  }
}
