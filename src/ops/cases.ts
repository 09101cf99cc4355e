import type pg from 'pg';
import { caseAgeBucketSql, type CaseAgeBucket } from '../ledger/aging.ts';
import type { SwapEventOf } from '../events/types.ts';
import { actStep, type CaseRecord, type SwapFactsForCase } from '../cases/machine.ts';
import type { SwapRef } from '../swap/ref.ts';

/**
 * Reading cases for operators (CLI now, the console later) and checking an action against the case as it
 * stands before it is appended: a refusal is a CaseRefusal (an input error), nothing appended.
 */

export interface StoredCase extends CaseRecord {
  providerId: string;
  swapId: string;
  lastEventId: string;
  updatedAt: string;
}

const CASE_COLUMNS = `provider_id, swap_id, state, outcome, trigger, trigger_event_id, opened_at, openings,
  resolved_at, amount_at_stake, stake_currency, failing, pending_write_off, resolution, history, last_event_id,
  updated_at`;

const iso = (v: unknown) => (v === null ? null : new Date(v as string).toISOString());

function caseOf(r: Record<string, unknown>): StoredCase {
  return {
    providerId: r.provider_id as string,
    swapId: r.swap_id as string,
    state: r.state as CaseRecord['state'],
    outcome: r.outcome as CaseRecord['outcome'],
    trigger: r.trigger as CaseRecord['trigger'],
    triggerEventId: r.trigger_event_id as string,
    openedAt: iso(r.opened_at)!,
    openings: r.openings as number,
    resolvedAt: iso(r.resolved_at),
    amountAtStake: r.amount_at_stake as string | null,
    stakeCurrency: r.stake_currency as string | null,
    failing: r.failing as string,
    pendingWriteOff: r.pending_write_off as CaseRecord['pendingWriteOff'],
    resolution: r.resolution as CaseRecord['resolution'],
    history: r.history as CaseRecord['history'],
    lastEventId: r.last_event_id as string,
    updatedAt: iso(r.updated_at)!,
  };
}

/** The swap's case, or undefined when none opened; `pool` searches the projection schema. */
export async function loadCase(pool: pg.Pool, ref: SwapRef): Promise<StoredCase | undefined> {
  const r = await pool.query(`select ${CASE_COLUMNS} from cases where provider_id = $1 and swap_id = $2`, [
    ref.providerId,
    ref.swapId,
  ]);
  return r.rows[0] ? caseOf(r.rows[0]) : undefined;
}

/** A check's name as the reconciler writes it (`amount.to_wallet`, `chain.payout`, `quote.fee.referral`). */
export const CHECK_NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+){0,3}$/;

/** Cases by state (default: every unresolved one), partner, age bucket and failing check, oldest opened first. */
export async function listCases(
  pool: pg.Pool,
  filter: { states?: readonly string[]; providerId?: string; age?: CaseAgeBucket; check?: string } = {},
): Promise<StoredCase[]> {
  const states = filter.states ?? ['open', 'acknowledged', 'disputed'];
  // `failing` is "name:verdict:actual|…": a check matches at the start of one of its parts.
  const r = await pool.query(
    `select ${CASE_COLUMNS} from cases where state = any($1::text[]) and ($2::text is null or provider_id = $2)
       and ($3::text is null or ${caseAgeBucketSql('opened_at')} = $3)
       and ($4::text is null or position('|' || $4 || ':' in '|' || failing) > 0)
     order by opened_at, provider_id, swap_id limit 1000`,
    [states, filter.providerId ?? null, filter.age ?? null, filter.check ?? null],
  );
  return r.rows.map(caseOf);
}

/** What an action reads of the swap (its currencies, its latest correction). */
export async function swapFactsForCase(pool: pg.Pool, ref: SwapRef): Promise<SwapFactsForCase | undefined> {
  const r = await pool.query<{ f: string; t: string; c: string | null }>(
    `select payload_currency_from as f, payload_currency_to as t, last_correction_event_id as c
       from swaps where provider_id = $1 and swap_id = $2`,
    [ref.providerId, ref.swapId],
  );
  const row = r.rows[0];
  return row ? { currencyFrom: row.f, currencyTo: row.t, lastCorrectionEventId: row.c } : undefined;
}

/**
 * Steps the case as it stands with the action (throws CaseRefusal: nothing to append) and returns the case
 * it would become. The fold steps again at its position in the log, so a race is still refused there.
 */
export async function checkCaseAction(
  pool: pg.Pool,
  ref: SwapRef,
  event: SwapEventOf<'CaseActed'>,
): Promise<CaseRecord> {
  const facts = await swapFactsForCase(pool, ref);
  const current = await loadCase(pool, ref);
  return actStep(
    current,
    event.payload,
    { eventId: event.eventId, at: event.occurredAt },
    facts ?? { currencyFrom: '', currencyTo: '', lastCorrectionEventId: null },
  );
}

/** One line per case, for a terminal. */
export function formatCaseLine(c: StoredCase): string {
  const stake = c.amountAtStake === null ? 'stake unknown' : `${c.amountAtStake} ${c.stakeCurrency}`;
  const pending = c.pendingWriteOff
    ? `  write-off ${c.pendingWriteOff.amount} ${c.pendingWriteOff.currency} by ${c.pendingWriteOff.proposedBy} awaits approval`
    : '';
  return `${c.providerId}/${c.swapId}  ${c.state}${c.outcome ? ` (${c.outcome})` : ''}  ${c.trigger}  opened ${c.openedAt}  ${stake}${pending}`;
}

/** A case and its history, for a terminal. */
export function formatCase(c: StoredCase): string {
  const lines = [formatCaseLine(c)];
  if (c.resolution) lines.push(`  resolution: ${JSON.stringify(c.resolution)}`);
  for (const h of c.history) {
    const who = h.operator ? ` by ${h.operator}` : '';
    const details = Object.keys(h.details).length ? ` ${JSON.stringify(h.details)}` : '';
    lines.push(
      `  ${h.at}  ${h.step}${who}: ${h.from ?? '-'} → ${h.to}  ${h.reason}${details}  [${h.eventId}]`,
    );
  }
  return lines.join('\n');
}
