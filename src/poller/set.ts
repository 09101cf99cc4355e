import type pg from 'pg';
import { reportValuesOfRow, type ReportColumns } from '../swap/report.ts';
import type { PolledSwap } from './change.ts';

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

/**
 * Swaps owed their one confirming GET /status: final within the window, made final by an applied
 * StatusReported that came by webhook, and not confirmed yet (platform.poll_confirmations). Whatever is
 * already known: the webhook carries no payout network fee, and a pending poll's figures are estimates.
 */
export async function confirmationCandidates(
  pool: pg.Pool,
  windowHours: number,
  providerIds?: readonly string[],
): Promise<PolledSwap[]> {
  const r = await pool.query<Row>(
    `select ${COLUMNS} from swaps s
     where s.final and s.final_at > now() - make_interval(hours => $1)
       and ($2::text[] is null or s.provider_id = any($2))
       and not exists (select 1 from platform.poll_confirmations c
                       where c.swap_id = s.swap_id and c.provider_id = s.provider_id)
       and exists (select 1 from event_journal j
                   where j.provider_id = s.provider_id and j.swap_id = s.swap_id and j.event_type = 'StatusReported' and j.outcome = 'applied'
                     and j.changes ? 'final' and j.source = 'webhook')
     order by s.provider_id, s.swap_id`,
    [windowHours, providerIds?.length ? providerIds : null],
  );
  return r.rows.map(polled);
}

export type ConfirmationOutcome = 'appended' | 'nothing_new' | 'unmappable' | 'not_found';

/** Records that a swap's confirming poll was done (once: a second record is ignored). */
export async function recordConfirmation(
  pool: pg.Pool,
  c: { swapId: string; providerId: string; outcome: ConfirmationOutcome; detail?: string; eventId?: string },
): Promise<void> {
  await pool.query(
    `insert into platform.poll_confirmations (swap_id, provider_id, outcome, detail, event_id)
     values ($1, $2, $3, $4, $5) on conflict (swap_id, provider_id) do nothing`,
    [c.swapId, c.providerId, c.outcome, c.detail?.slice(0, 500) ?? null, c.eventId ?? null],
  );
}
