import type pg from 'pg';
import { swapKey } from '../events/keys.ts';
import type { SwapRef } from '../swap/ref.ts';

export interface TimelineEntry {
  eventId: string;
  eventType: string;
  source: string;
  occurredAt: string;
  recordedAt: string;
  outcome: string;
  reason: string | null;
  changes: Record<string, [unknown, unknown]> | null;
  position: string;
}

export interface SwapTimeline {
  swap: Record<string, unknown> | undefined;
  timeline: TimelineEntry[];
  deadLetters: Record<string, unknown>[];
  reconciliation: Record<string, unknown> | undefined;
  /** Every verdict, oldest first, each with the event it is based on. */
  verdicts: Record<string, unknown>[];
  /** Reports that contradicted the final swap, one row per field. */
  conflicts: Record<string, unknown>[];
}

/** A swap's state and every event the journal holds for it, in log order, from the pool's schema. */
export async function swapTimeline(pool: pg.Pool, ref: SwapRef): Promise<SwapTimeline> {
  const ids = [ref.providerId, ref.swapId];
  const swap = await pool.query('select * from swaps where provider_id = $1 and swap_id = $2', ids);
  // Its key, and the bare swapId that keyed a swap's events before keys named the provider.
  const keys = [swapKey(ref.providerId, ref.swapId), ref.swapId];
  const journal = await pool.query(
    `select event_id, event_type, source, occurred_at, recorded_at, outcome, reason, changes, topic, partition, "offset"
     from event_journal where (provider_id = $1 and swap_id = $2) or aggregate_key = $3
     order by topic, partition, "offset"`,
    [...ids, keys[0]],
  );
  const dls = await pool.query(
    'select * from dead_letters where aggregate_key = any($1::text[]) order by "offset"',
    [keys],
  );
  const rec = await pool.query('select * from reconciliations where provider_id = $1 and swap_id = $2', ids);
  const verdicts = await pool.query(
    'select * from reconciliation_history where provider_id = $1 and swap_id = $2 order by reconciled_at, event_id',
    ids,
  );
  const conflicts = await pool.query(
    'select * from status_conflicts where provider_id = $1 and swap_id = $2 order by occurred_at, conflict_id',
    ids,
  );
  return {
    verdicts: verdicts.rows,
    conflicts: conflicts.rows,
    swap: swap.rows[0],
    timeline: journal.rows.map((r) => ({
      eventId: r.event_id,
      eventType: r.event_type,
      source: r.source,
      occurredAt: r.occurred_at,
      recordedAt: r.recorded_at,
      outcome: r.outcome,
      reason: r.reason,
      changes: r.changes,
      position: `${r.topic}:${r.partition}:${r.offset}`,
    })),
    deadLetters: dls.rows,
    reconciliation: rec.rows[0],
  };
}

const show = (v: unknown) => (v === null || v === undefined ? '—' : String(v));

/** The terminal rendering of `swap show`. */
export function formatTimeline(swapId: string, t: SwapTimeline): string {
  const lines: string[] = [];
  if (!t.swap) lines.push(`swap ${swapId}: no projected state`);
  else {
    const s = t.swap;
    lines.push(
      `swap ${swapId}  provider ${show(s.provider_id)}  ${show(s.trade_method)}  ${show(s.currency_from)} → ${show(s.currency_to)}`,
    );
    lines.push(
      `  status ${show(s.status)} (${show(s.status_class)})  partner status ${show(s.provider_status)}  version ${show(s.version)}${s.corrected ? '  corrected' : ''}`,
    );
    lines.push(
      `  amount from ${show(s.amount_from)}  amount to ${show(s.amount_to)}  quoted ${show(s.quoted_amount_to)}`,
    );
    lines.push(
      `  fees at creation provider ${show(s.created_provider_fees)} referral ${show(s.created_referral_fees)} payout network ${show(s.created_payout_network_fees)}`,
    );
    lines.push(
      `  fees reported    provider ${show(s.provider_fees)} referral ${show(s.referral_fees)} payout network ${show(s.payout_network_fees)}`,
    );
    lines.push(
      `  payin tx ${show(s.payin_transaction_id)}  payout tx ${show(s.payout_transaction_id)}  signature ${s.signature_valid ? 'valid' : 'INVALID'}`,
    );
  }
  if (t.reconciliation) lines.push(`  reconciliation ${show(t.reconciliation.verdict)}`);
  for (const v of t.verdicts)
    lines.push(
      `  verdict ${show(v.verdict).padEnd(16)} at ${show(v.reconciled_at)}  based on ${show(v.based_on_event_id)}${v.event_id === t.reconciliation?.event_id ? '  (current)' : ''}`,
    );
  for (const c of t.conflicts)
    lines.push(
      `  CONFLICT ${show(c.field)}: final ${show(c.final_value)}, ${show(c.source)} reported ${show(c.reported_value)} at ${show(c.occurred_at)}`,
    );
  for (const dl of t.deadLetters)
    lines.push(`  dead letter ${show(dl.dead_letter_id)} ${show(dl.status)}: ${show(dl.reason)}`);
  lines.push('', 'timeline:');
  for (const e of t.timeline) {
    const changes = e.changes
      ? ' ' +
        Object.entries(e.changes)
          .map(([k, [a, b]]) => `${k} ${show(a)}→${show(b)}`)
          .join(', ')
      : '';
    lines.push(
      `  ${e.recordedAt}  ${e.eventType.padEnd(19)} ${e.source.padEnd(10)} ${e.outcome.toUpperCase().padEnd(8)}${changes}${e.reason ? `  (${e.reason})` : ''}`,
    );
  }
  return lines.join('\n');
}
