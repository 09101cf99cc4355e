import type pg from 'pg';

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
}

/** A swap's state and every event the journal holds for it, in log order, from the pool's schema. */
export async function swapTimeline(pool: pg.Pool, swapId: string): Promise<SwapTimeline> {
  const swap = await pool.query('select * from swaps where swap_id = $1', [swapId]);
  const journal = await pool.query(
    `select event_id, event_type, source, occurred_at, recorded_at, outcome, reason, changes, topic, partition, "offset"
     from event_journal where aggregate_key = $1 or swap_id = $1 order by topic, partition, "offset"`,
    [swapId],
  );
  const dls = await pool.query('select * from dead_letters where aggregate_key = $1 order by "offset"', [
    swapId,
  ]);
  const rec = await pool.query('select * from reconciliations where swap_id = $1', [swapId]);
  return {
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
      `  status ${show(s.status)}${s.final ? ' (final)' : ''}  partner status ${show(s.provider_status)}  version ${show(s.version)}${s.corrected ? '  corrected' : ''}`,
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
