import type pg from 'pg';
import cron, { type ScheduledTask } from 'node-cron';
import { uuidv7 } from '../events/ids.ts';
import type { EventAppender } from '../events/producer.ts';
import type { SwapCreated, SwapEventOf } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry, Counter } from '../observability/metrics.ts';
import { readProviderSetup } from '../providers/store.ts';
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

  constructor(private readonly options: ReconcilerOptions) {
    this.verdicts = options.metrics?.counter(
      'swap_ledger_reconciliation_verdicts_total',
      'Swaps reconciled, by provider and verdict',
      ['provider', 'verdict'],
    );
  }

  /** Checks one swap against its signed payload; appends nothing. */
  async check(swapId: string, basedOnEventId?: string): Promise<SwapReconciliation> {
    const { projection } = this.options;
    const swap = await projection.query('select * from swaps where swap_id = $1', [swapId]);
    const row = swap.rows[0];
    if (!row) throw new ReconcileError(`no swap ${swapId} in the projection`);
    const created = await projection.query<{ payload: SwapCreated }>(
      `select payload from event_journal where swap_id = $1 and event_type = 'SwapCreated' and outcome = 'applied'`,
      [swapId],
    );
    if (!created.rows[0])
      throw new ReconcileError(`swap ${swapId} has no applied SwapCreated in the journal`);
    const setup = await readProviderSetup(this.options.platform, row.provider_id);
    const result = await inspectAndReconcile(
      {
        creation: creationFactsFromSwapCreated(created.rows[0].payload),
        final: finalReportFromSwapRow({
          status: row.status,
          final: row.final,
          amountTo: row.amount_to,
          providerFees: row.provider_fees,
          referralFees: row.referral_fees,
          payoutNetworkFees: row.payout_network_fees,
          payinTransactionId: row.payin_transaction_id,
          payoutTransactionId: row.payout_transaction_id,
        }),
      },
      setup?.payloadKeys ?? [],
      this.options.policy,
    );
    const based =
      basedOnEventId ?? (row.last_correction_event_id as string | null) ?? (row.last_event_id as string);
    const now = new Date();
    const event: SwapEventOf<'SwapReconciled'> = {
      eventId: uuidv7(now.getTime()),
      eventType: 'SwapReconciled',
      swapId,
      aggregateKey: swapId,
      providerId: row.provider_id,
      source: 'reconciler',
      occurredAt: now.toISOString(),
      recordedAt: now.toISOString(),
      payload: toSwapReconciled(result, based),
    };
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
      const rows = await client.query<{ swap_id: string; queued_by_event_id: string }>(
        `select q.swap_id, q.queued_by_event_id from reconciliation_queue q
         where not exists (select 1 from reconciliations r
                           where r.swap_id = q.swap_id and r.based_on_event_id = q.queued_by_event_id)
         order by q.queued_at, q.swap_id limit $1 for update of q skip locked`,
        [this.options.batchSize ?? 100],
      );
      for (const { swap_id, queued_by_event_id } of rows.rows) {
        if ((this.inFlight.get(`${swap_id}/${queued_by_event_id}`) ?? 0) > Date.now()) continue;
        try {
          const r = await this.check(swap_id, queued_by_event_id);
          await this.record(r);
          this.inFlight.set(`${swap_id}/${queued_by_event_id}`, Date.now() + 60_000);
          done++;
        } catch (e) {
          this.options.logger.error(
            { err: e, swapId: swap_id },
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
   * Final swaps that have no verdict and are not queued (e.g. finalised before the reconciler existed):
   * queued ones are the queue's business.
   */
  async sweepMissed(limit = 1000): Promise<number> {
    const missed = await this.options.projection.query<{ swap_id: string }>(
      `select s.swap_id from swaps s
       where s.final and not exists (select 1 from reconciliations r where r.swap_id = s.swap_id)
         and not exists (select 1 from reconciliation_queue q where q.swap_id = s.swap_id)
       order by s.final_at limit $1`,
      [limit],
    );
    for (const { swap_id } of missed.rows) await this.record(await this.check(swap_id));
    return missed.rowCount ?? 0;
  }

  /** Final swaps that became final at or after `since`, oldest first (for `reconcile --since`). */
  async finalSwapsSince(since: Date): Promise<string[]> {
    const r = await this.options.projection.query<{ swap_id: string }>(
      'select swap_id from swaps where final and final_at >= $1 order by final_at, swap_id',
      [since.toISOString()],
    );
    return r.rows.map((row) => row.swap_id);
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
