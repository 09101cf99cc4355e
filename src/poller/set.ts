import type pg from 'pg';
import { reportValuesOfRow, type ReportColumns } from '../swap/report.ts';
import type { PolledSwap } from './change.ts';
import type { ConfirmationState } from './confirm.ts';

/**
 * The poller's reads. `pool`'s search_path is the live projection (swaps, event_journal: read only);
 * platform tables are qualified.
 */

interface Row extends ReportColumns {
  swap_id: string;
  provider_id: string;
  status: string;
  status_class: string;
  final: boolean;
  version: number | null;
}

const polled = (r: Row): PolledSwap => ({
  swapId: r.swap_id,
  providerId: r.provider_id,
  status: r.status,
  statusClass: r.status_class,
  final: r.final,
  version: r.version,
  ...reportValuesOfRow(r),
});

const COLUMNS = `s.swap_id, s.provider_id, s.status, s.status_class, s.final, s.version, s.amount_to,
  s.provider_fees, s.referral_fees, s.payout_network_fees, s.payin_transaction_id, s.payout_transaction_id,
  s.refund_transaction_id`;

/**
 * The polling set: every projected swap open, the closed ones (EXPIRED: a late deposit may still be
 * processed) that closed within `closedGraceHours`, plus the swaps the gateway created that the projector
 * has not folded yet (of the listed providers, or all) (created_swaps of the last `createdWithinHours`;
 * an older one that never reached the projection is an operator's matter, not a poll's).
 */
export async function pollingSet(
  pool: pg.Pool,
  options: { providerIds?: readonly string[]; createdWithinHours?: number; closedGraceHours?: number } = {},
): Promise<PolledSwap[]> {
  const r = await pool.query<Row>(
    `select ${COLUMNS} from swaps s
     where (s.status_class = 'open'
            or (s.status_class = 'closed' and s.closed_at > now() - make_interval(hours => $3)))
       and ($2::text[] is null or s.provider_id = any($2))
     union all
     select c.swap_id, c.provider_id, 'CREATED', 'open', false, null, null, null, null, null, null, null, null
     from platform.created_swaps c
     where c.recorded_at > now() - make_interval(hours => $1)
       and ($2::text[] is null or c.provider_id = any($2))
       and not exists (select 1 from swaps s where s.swap_id = c.swap_id and s.provider_id = c.provider_id)
     order by 2, 1`,
    [
      options.createdWithinHours ?? 24,
      options.providerIds?.length ? options.providerIds : null,
      options.closedGraceHours ?? 7 * 24,
    ],
  );
  return r.rows.map(polled);
}

/** A swap owed a confirming poll: made final by webhook, not confirmed or given up yet. */
export interface ConfirmCandidate extends PolledSwap {
  /** When it became final (the event's time): its deadline counts from here. */
  readonly finalAt: string;
  /** Answered confirming polls so far (0: none, no poll_confirmations row yet). */
  readonly attempts: number;
}

interface CandidateRow extends Row {
  final_at_ms: number;
  attempts: number;
}

/**
 * A final swap with a figure its outcome needs still unknown (confirm.ts `neededFigures`: the amount, the three
 * fees, and FINISHED's payin and payout hashes or REFUNDED's payin and refund hashes), whatever made it final.
 */
const INCOMPLETE = `(s.amount_to is null or s.provider_fees is null or s.referral_fees is null
  or s.payout_network_fees is null
  or (s.status = 'FINISHED' and (s.payin_transaction_id is null or s.payout_transaction_id is null))
  or (s.status = 'REFUNDED' and (s.payin_transaction_id is null or s.refund_transaction_id is null)))`;

/**
 * Swaps owed a confirming GET /status now: those made final within `windowHours` with a needed figure still
 * unknown (a poll that made them final with fees blank) or by an applied StatusReported that came by
 * webhook (which never carries the payout network fee), never confirmed (no platform.poll_confirmations row: due at once,
 * whatever their regular poll schedule), and those still confirming whose next attempt is due at `nowMs`
 * (the poller's clock; however long ago they became final: the deadline is the poller's to apply).
 * Whatever is already known: the webhook carries no payout network fee, and a pending poll's figures are
 * estimates.
 */
export async function confirmationCandidates(
  pool: pg.Pool,
  windowHours: number,
  nowMs: number,
  providerIds?: readonly string[],
): Promise<ConfirmCandidate[]> {
  const r = await pool.query<CandidateRow>(
    `select ${COLUMNS}, (extract(epoch from s.final_at) * 1000)::float8 as final_at_ms, 0 as attempts from swaps s
     where s.final and s.final_at > now() - make_interval(hours => $1)
       and ($2::text[] is null or s.provider_id = any($2))
       and not exists (select 1 from platform.poll_confirmations c
                       where c.swap_id = s.swap_id and c.provider_id = s.provider_id)
       and (${INCOMPLETE}
            or exists (select 1 from event_journal j
                       where j.provider_id = s.provider_id and j.swap_id = s.swap_id and j.event_type = 'StatusReported' and j.outcome = 'applied'
                         and j.changes ? 'final' and j.source = 'webhook'))
     union all
     select ${COLUMNS}, (extract(epoch from s.final_at) * 1000)::float8, c.attempts from platform.poll_confirmations c
     join swaps s on s.swap_id = c.swap_id and s.provider_id = c.provider_id
     where c.state = 'confirming' and (c.next_due_at is null or c.next_due_at <= $3)
       and s.final
       and ($2::text[] is null or c.provider_id = any($2))
     order by 2, 1`,
    [windowHours, providerIds?.length ? providerIds : null, new Date(nowMs)],
  );
  return r.rows.map((row) => ({
    ...polled(row),
    finalAt: new Date(row.final_at_ms).toISOString(),
    attempts: Number(row.attempts),
  }));
}

/** What a confirming attempt found: GET /status's answer as the poller took it, or the deadline. */
export type ConfirmationOutcome =
  'appended' | 'nothing_new' | 'stale' | 'unmappable' | 'not_found' | 'error' | 'deadline';

export interface ConfirmationRecord {
  readonly swapId: string;
  readonly providerId: string;
  /** The answered attempts the poller saw when it took the swap (0: no row yet). */
  readonly seenAttempts: number;
  readonly outcome: ConfirmationOutcome;
  readonly state: ConfirmationState;
  /** Still confirming: when to ask again (the poller's clock). */
  readonly nextDueAt: number | null;
  readonly missing: readonly string[];
  /** The poller's clock at the attempt. */
  readonly at: number;
  readonly detail?: string;
  readonly eventId?: string;
}

/**
 * Records a confirming attempt, conditionally: the first creates the row (only if none exists), a later one
 * updates it only if it is still confirming with the attempts the poller saw. False when another poller
 * recorded this attempt first: the caller then appends nothing. An attempt whose answer counts (`outcome`
 * not `deadline`) adds one to `attempts`.
 */
export async function recordConfirmation(pool: pg.Pool, c: ConfirmationRecord): Promise<boolean> {
  const attempts = c.seenAttempts + (c.outcome === 'deadline' ? 0 : 1);
  const values = [
    c.swapId,
    c.providerId,
    c.outcome,
    c.detail?.slice(0, 500) ?? null,
    c.eventId ?? null,
    c.state,
    attempts,
    c.nextDueAt === null ? null : new Date(c.nextDueAt),
    [...c.missing],
    new Date(c.at),
  ];
  const r =
    c.seenAttempts === 0
      ? await pool.query(
          `insert into platform.poll_confirmations
             (swap_id, provider_id, outcome, detail, event_id, state, attempts, next_due_at, missing,
              confirmed_at, last_attempt_at, ended_at)
           values ($1, $2, $3, $4, $5, $6::text, $7, $8::timestamptz, $9::text[], $10::timestamptz,
                   $10::timestamptz, case when $6::text = 'confirming' then null else $10::timestamptz end)
           on conflict (swap_id, provider_id) do nothing`,
          values,
        )
      : await pool.query(
          `update platform.poll_confirmations
           set outcome = $3, detail = $4, event_id = coalesce($5::uuid, event_id), state = $6::text,
               attempts = $7, next_due_at = $8::timestamptz, missing = $9::text[],
               last_attempt_at = $10::timestamptz,
               ended_at = case when $6::text = 'confirming' then null else $10::timestamptz end
           where swap_id = $1 and provider_id = $2 and state = 'confirming' and attempts = $11`,
          [...values, c.seenAttempts],
        );
  return r.rowCount === 1;
}

/**
 * Takes back an attempt whose StatusReported could not be appended: the swap stays confirming and is due
 * again at once (the poller's in-memory backoff spaces the retries). Only the attempt this poller recorded.
 */
export async function reopenConfirmation(
  pool: pg.Pool,
  c: { swapId: string; providerId: string; attempts: number; detail: string; at: number },
): Promise<void> {
  await pool.query(
    `update platform.poll_confirmations
     set state = 'confirming', outcome = 'error', detail = $4, event_id = null, next_due_at = null,
         ended_at = null, last_attempt_at = $5
     where swap_id = $1 and provider_id = $2 and attempts = $3`,
    [c.swapId, c.providerId, c.attempts, c.detail.slice(0, 500), new Date(c.at)],
  );
}

/** A swap whose confirmation deadline passed with figures never reported (platform.confirmations_never_reported). */
export interface NeverReported {
  readonly providerId: string;
  readonly swapId: string;
  readonly missing: string[];
  readonly attempts: number;
  readonly lastOutcome: string;
  readonly abandonedAt: string;
}

/**
 * The swaps whose confirmation deadline passed with figures never reported, newest first (of the listed
 * providers, or all): each missing figure is UNVERIFIABLE "never reported", the swap an exception.
 */
export async function neverReported(
  pool: pg.Pool,
  options: { providerIds?: readonly string[]; limit?: number } = {},
): Promise<NeverReported[]> {
  const r = await pool.query<{
    provider_id: string;
    swap_id: string;
    missing: string[];
    attempts: number;
    last_outcome: string;
    abandoned_at: string;
  }>(
    `select provider_id, swap_id, missing, attempts, last_outcome, abandoned_at
     from platform.confirmations_never_reported
     where ($1::text[] is null or provider_id = any($1))
     order by abandoned_at desc, provider_id, swap_id limit $2`,
    [options.providerIds?.length ? options.providerIds : null, options.limit ?? 1000],
  );
  return r.rows.map((row) => ({
    providerId: row.provider_id,
    swapId: row.swap_id,
    missing: row.missing,
    attempts: row.attempts,
    lastOutcome: row.last_outcome,
    abandonedAt: row.abandoned_at,
  }));
}

/**
 * Closed swaps where money moved (a payin, a payout, a refund or an amount reported on an EXPIRED swap) whose
 * grace window ended with no final status to settle them, counted by provider: the poller no longer asks
 * about them, so they are alerted on (finance.ledger_exceptions lists each).
 */
export async function expiredWithMoneyPastGrace(
  pool: pg.Pool,
  options: { providerIds?: readonly string[]; closedGraceHours?: number } = {},
): Promise<{ providerId: string; swaps: number }[]> {
  const r = await pool.query<{ provider_id: string; swaps: number }>(
    `select provider_id, count(*)::int as swaps from swaps
     where status_class = 'closed' and closed_at <= now() - make_interval(hours => $1)
       and (payin_transaction_id is not null or payout_transaction_id is not null
            or refund_transaction_id is not null or coalesce(amount_to, 0) <> 0)
       and ($2::text[] is null or provider_id = any($2))
     group by provider_id order by provider_id`,
    [options.closedGraceHours ?? 7 * 24, options.providerIds?.length ? options.providerIds : null],
  );
  return r.rows.map((row) => ({ providerId: row.provider_id, swaps: row.swaps }));
}

/** Where the poller reads its sets and records confirmations (Postgres unless replaced, e.g. in tests). */
export interface PollerStore {
  pollingSet(): Promise<PolledSwap[]>;
  /** Closed swaps where money moved and the grace window ended unsettled, counted by provider. */
  expiredWithMoneyPastGrace?(): Promise<{ providerId: string; swaps: number }[]>;
  /** Swaps owed a confirming poll at `nowMs` (the poller's clock). */
  confirmationCandidates(nowMs: number): Promise<ConfirmCandidate[]>;
  /** Records a confirming attempt if no other poller recorded it first (false: it did). */
  recordConfirmation(c: ConfirmationRecord): Promise<boolean>;
  /** Takes back an attempt whose StatusReported was not appended: due again at once. */
  reopenConfirmation(c: {
    swapId: string;
    providerId: string;
    attempts: number;
    detail: string;
    at: number;
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
    confirmationCandidates: (nowMs) => confirmationCandidates(pool, confirmWindowHours, nowMs, providerIds),
    expiredWithMoneyPastGrace: () =>
      expiredWithMoneyPastGrace(pool, {
        ...(providerIds ? { providerIds } : {}),
        ...(closedGraceHours !== undefined ? { closedGraceHours } : {}),
      }),
    recordConfirmation: (c) => recordConfirmation(pool, c),
    reopenConfirmation: (c) => reopenConfirmation(pool, c),
  };
}
