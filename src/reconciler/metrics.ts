import type pg from 'pg';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry } from '../observability/metrics.ts';
import type { ReconciledCheck, Verdict } from './types.ts';

/** A verdict appended: what its metric, its log line and onVerdict see. */
export interface RecordedVerdict {
  swapId: string;
  providerId: string;
  basedOnEventId: string;
  verdict: Verdict;
  /** The checks that did not pass (MISMATCH, UNVERIFIABLE). */
  failing: ReconciledCheck[];
  eventId: string;
  occurredAt: string;
  /** When the swap became final, ms since the epoch (times come from Postgres as text). */
  finalAtMs: number | null;
}

/**
 * An appended verdict in a metric and a log line: a mismatch at warn with its failing checks, UNVERIFIABLE at
 * info, a match at debug; then the observer (onVerdict), whose failure never counts the verdict failed.
 */
export function verdictRecorder(
  metrics: MetricsRegistry | undefined,
  logger: Logger,
  onVerdict?: (v: RecordedVerdict) => void,
): (v: RecordedVerdict) => void {
  const verdicts = metrics?.counter(
    'swap_ledger_reconciliation_verdicts_total',
    'Swaps reconciled, by provider and verdict',
    ['provider', 'verdict'],
  );
  return (v) => {
    verdicts?.inc({ provider: v.providerId, verdict: v.verdict });
    try {
      onVerdict?.(v);
    } catch (e) {
      // The verdict is appended: an observer's failure must not count it failed (it would be judged again).
      logger.warn({ err: e, swapId: v.swapId, provider: v.providerId }, 'verdict observer failed');
    }
    const fields = {
      swapId: v.swapId,
      provider: v.providerId,
      verdict: v.verdict,
      basedOn: v.basedOnEventId,
    };
    if (v.verdict === 'MISMATCH') {
      logger.warn({ ...fields, failing: v.failing }, 'swap reconciled: MISMATCH');
    } else if (v.verdict === 'UNVERIFIABLE') {
      logger.info({ ...fields, unverifiable: v.failing.map((c) => c.name) }, 'swap reconciled: UNVERIFIABLE');
    } else if (logger.isLevelEnabled('debug')) {
      // A match is the common case, thousands a second in a backlog: counted always, logged at debug.
      logger.debug(fields, `swap reconciled: ${v.verdict}`);
    }
  };
}

/**
 * Reconciler metrics beyond the verdict counter: the queue (depth and oldest age, read from the
 * projection at each scrape, since several reconcilers share it) and the time from a swap becoming final
 * to its verdict.
 */
export function createReconcilerMetrics(metrics: MetricsRegistry, projection: pg.Pool) {
  const latency = metrics.histogram(
    'swap_ledger_reconciliation_final_to_verdict_seconds',
    'Time from a swap becoming final to its reconciliation verdict being appended',
    [],
    [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600],
  );
  const read = async () =>
    (
      await projection.query<{ depth: number; oldest_s: number | null }>(
        `select count(*)::int as depth, extract(epoch from now() - min(queued_at))::float8 as oldest_s
           from reconciliation_queue`,
      )
    ).rows[0]!;
  let pending: ReturnType<typeof read> | undefined;
  const once = () => (pending ??= read().finally(() => setTimeout(() => (pending = undefined), 0)));
  metrics.gauge(
    'swap_ledger_reconciliation_queue_depth',
    'Swaps queued for reconciliation (final or corrected) awaiting a verdict',
    [],
    async function () {
      try {
        this.set((await once()).depth);
      } catch {
        /* keep the last value */
      }
    },
  );
  metrics.gauge(
    'swap_ledger_reconciliation_oldest_queued_age_seconds',
    'Age of the oldest swap in the reconciliation queue (0 when empty)',
    [],
    async function () {
      try {
        this.set((await once()).oldest_s ?? 0);
      } catch {
        /* keep the last value */
      }
    },
  );
  metrics.gauge(
    'swap_ledger_reconciliation_open_mismatches',
    'Swaps whose latest reconciliation verdict is MISMATCH (until corrected and reconciled again)',
    [],
    async function () {
      try {
        const r = await projection.query<{ n: number }>(
          `select count(*)::int as n from reconciliations where verdict = 'MISMATCH'`,
        );
        this.set(r.rows[0]!.n);
      } catch {
        /* keep the last value */
      }
    },
  );
  // Exported by the reconciler: its verdicts open the cases and it already reads the projection on a scrape.
  metrics.gauge(
    'swap_ledger_cases_oldest_open_age_seconds',
    'Age of the oldest unresolved case per partner (README, "Cases"); no series when none is open',
    ['provider'],
    async function () {
      try {
        const r = await projection.query<{ provider_id: string; age_s: number }>(
          `select provider_id, extract(epoch from now() - min(opened_at))::float8 as age_s
             from cases where state <> 'resolved' group by provider_id`,
        );
        this.reset();
        for (const row of r.rows) this.set({ provider: row.provider_id }, Math.max(0, row.age_s));
      } catch {
        /* keep the last value */
      }
    },
  );
  // An issued referral invoice in force, past its due date (UTC day), with something still outstanding.
  metrics.gauge(
    'swap_ledger_invoices_overdue',
    'Referral invoices in force unpaid past their due date, per partner (README, "Month end"); no series when none',
    ['provider'],
    async function () {
      try {
        const r = await projection.query<{ provider_id: string; n: number }>(
          `select i.provider_id, count(*)::int as n from invoices i
            where not exists (select 1 from invoices n where n.supersedes = i.invoice_number)
              and i.due_date < to_char(now() at time zone 'UTC', 'YYYY-MM-DD')
              and exists (
                select 1 from invoice_lines l
                 where l.event_id = i.event_id and l.disputed is null
                   and l.referral_fee > coalesce((
                     select -sum(p.amount) from ledger_postings p
                      where p.provider_id = l.provider_id and p.swap_id = l.swap_id and p.currency = l.currency
                        and p.entry_kind = 'settlement' and p.account = 'referral_fees_receivable'), 0))
            group by i.provider_id`,
        );
        this.reset();
        for (const row of r.rows) this.set({ provider: row.provider_id }, row.n);
      } catch {
        /* keep the last value */
      }
    },
  );
  metrics.gauge(
    'swap_ledger_chain_evidence_unreliable',
    'Reported transactions past their chain deadline whose source refused to be believed (source_unreliable) or that are still unconfirmed (unconfirmed_past_deadline): their chain checks stay UNVERIFIABLE',
    ['reason'],
    async function () {
      try {
        const r = await projection.query<{ refused: number; unconfirmed: number }>(
          `select count(*) filter (where status = 'refused')::int as refused,
                  count(*) filter (where status in ('found', 'pending')
                                     and confirmations < required_confirmations)::int as unconfirmed
             from chain_observations where deadline_passed`,
        );
        this.set({ reason: 'source_unreliable' }, r.rows[0]!.refused);
        this.set({ reason: 'unconfirmed_past_deadline' }, r.rows[0]!.unconfirmed);
      } catch {
        /* keep the last value */
      }
    },
  );
  return {
    /** For ReconcilerOptions.onVerdict: observes final -> verdict from the swap's final_at, read with it. */
    onVerdict(v: RecordedVerdict): void {
      if (v.finalAtMs !== null) latency.observe(Math.max(0, (Date.parse(v.occurredAt) - v.finalAtMs) / 1000));
    },
  };
}
