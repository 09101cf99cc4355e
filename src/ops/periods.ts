import type pg from 'pg';
import { newEvent } from '../events/keys.ts';
import type { SwapEventOf } from '../events/types.ts';
import { periodBounds } from '../ledger/periods.ts';
import {
  chainBreaks,
  chainHead,
  closeStatementProblems,
  closeTimingProblem,
  periodStates,
  Seal,
  type PeriodEvent,
} from '../monthend/seal.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { OperatorInputError } from './operator-events.ts';
import { statementStanding } from './statements.ts';

/**
 * `period close | verify | reopen`: reads the projection (postings, statements, period events), computes the
 * seal (src/monthend/seal.ts) and builds the operator's event. Appends nothing itself.
 */

/** Every period's closes and reopenings live under one key: one partition, so their order is the log's. */
export const PERIODS_KEY = 'periods';
const PAGE = 5000;

export async function periodEvents(pool: pg.Pool | pg.ClientBase): Promise<PeriodEvent[]> {
  const r = await pool.query<{
    kind: 'closed' | 'reopened';
    period: string;
    digest: string;
    previous_digest: string | null;
  }>(`select kind, period, digest, previous_digest from period_events order by event_id`);
  return r.rows.map((e) => ({
    kind: e.kind,
    period: e.period,
    digest: e.digest,
    previousDigest: e.previous_digest,
  }));
}

/** The seal of a period as the projection holds it now: its postings (by recordedAt month), its statements in force. */
export async function sealOf(
  pool: pg.Pool | pg.ClientBase,
  period: string,
  previousDigest: string | null,
  statementIds?: readonly string[],
): Promise<{ digest: string; postingCount: number; statementIds: string[] }> {
  const { start, end } = periodBounds(period);
  const seal = new Seal(period, previousDigest);
  let after: [string, number] = ['00000000-0000-0000-0000-000000000000', 0];
  const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  for (;;) {
    // Keyset pages in (entry_id, line) order: memory stays bounded whatever the month holds.
    const r = await pool.query<{
      entry_id: string;
      line: number;
      entry_kind: string;
      provider_id: string;
      swap_id: string;
      swap_version: number;
      account: string;
      currency: string;
      amount: string;
      effective_at: string;
      recorded_at: string;
    }>(
      `select entry_id::text, line, entry_kind, provider_id, swap_id, swap_version, account, currency, amount::text,
              ${iso('effective_at')} as effective_at, ${iso('recorded_at')} as recorded_at
         from ledger_postings
        where recorded_at >= $1 and recorded_at < $2 and (entry_id, line) > ($3::uuid, $4::int)
        order by entry_id, line limit ${PAGE}`,
      [start.toISOString(), end.toISOString(), after[0], after[1]],
    );
    for (const p of r.rows)
      seal.posting({
        entryId: p.entry_id,
        line: p.line,
        entryKind: p.entry_kind,
        providerId: p.provider_id,
        swapId: p.swap_id,
        swapVersion: p.swap_version,
        account: p.account,
        currency: p.currency,
        amount: p.amount,
        effectiveAt: p.effective_at,
        recordedAt: p.recorded_at,
      });
    if (r.rows.length < PAGE) break;
    const last = r.rows.at(-1)!;
    after = [last.entry_id, last.line];
  }
  // At a close, the statements in force; at a verify, the ones the close named.
  const ids =
    statementIds ??
    (await statementStanding(pool, period)).flatMap((s) => (s.statementId ? [s.statementId] : []));
  const st = await pool.query<{ statement_id: string; provider_id: string; file_digest: string }>(
    `select statement_id::text, provider_id, file_digest from statements where statement_id = any($1::uuid[])
      order by provider_id, statement_id`,
    [ids],
  );
  for (const s of st.rows) {
    const lines = await pool.query<{ line_no: number | null; swap_id: string; outcome: string }>(
      `select line_no, swap_id, outcome from statement_lines where statement_id = $1 order by seq`,
      [s.statement_id],
    );
    seal.statement({
      statementId: s.statement_id,
      providerId: s.provider_id,
      fileDigest: s.file_digest,
      lines: lines.rows.map((l) => ({ lineNo: l.line_no, swapId: l.swap_id, outcome: l.outcome })),
    });
  }
  return {
    digest: seal.digest(),
    postingCount: seal.postingCount,
    statementIds: st.rows.map((s) => s.statement_id),
  };
}

function operatorText(
  by: string | undefined,
  reason: string | undefined,
): { operator: string; reason: string } {
  const operator = by?.trim();
  const why = reason?.trim();
  if (!operator) throw new OperatorInputError('--by is required');
  if (!why) throw new OperatorInputError('--reason is required');
  for (const [flag, v] of [
    ['--by', operator],
    ['--reason', why],
  ] as const) {
    const problem = partnerTextProblem(v, 2000);
    if (problem) throw new OperatorInputError(`${flag} ${problem}`);
  }
  return { operator, reason: why };
}

/**
 * The PeriodClosed of a month, or an OperatorInputError naming every reason it may not close: the month has
 * not ended, it is closed already, a provider has no statement in force or one with differences (unless
 * `acceptDifferences`, recorded in the event).
 */
export async function periodCloseEvent(
  pool: pg.Pool,
  input: { period: string; by: string | undefined; reason: string | undefined; acceptDifferences: boolean },
  now = new Date(),
): Promise<SwapEventOf<'PeriodClosed'>> {
  const { operator, reason } = operatorText(input.by, input.reason);
  const events = await periodEvents(pool);
  const timing = closeTimingProblem(input.period, now, events);
  if (timing) throw new OperatorInputError(timing);
  const problems = closeStatementProblems(
    await statementStanding(pool, input.period),
    input.acceptDifferences,
  );
  if (problems.length > 0)
    throw new OperatorInputError(
      `${input.period} cannot close:\n${problems.map((p) => `  - ${p}`).join('\n')}\n(accept them knowingly with --accept-differences)`,
    );
  const previousDigest = chainHead(events);
  const seal = await sealOf(pool, input.period, previousDigest);
  return newEvent(
    'PeriodClosed',
    now,
    {
      period: input.period,
      operator,
      reason,
      digest: seal.digest,
      previousDigest,
      postingCount: seal.postingCount,
      statementIds: seal.statementIds,
      acceptedDifferences: input.acceptDifferences,
    },
    { providerId: '-', source: 'ops', aggregateKey: PERIODS_KEY },
  );
}

export async function periodReopenEvent(
  pool: pg.Pool,
  input: { period: string; by: string | undefined; reason: string | undefined; force: boolean },
  now = new Date(),
): Promise<SwapEventOf<'PeriodReopened'>> {
  if (!input.force) throw new OperatorInputError('reopening a closed period needs --force');
  const { operator, reason } = operatorText(input.by, input.reason);
  const state = periodStates(await periodEvents(pool)).get(input.period);
  if (state?.kind !== 'closed') throw new OperatorInputError(`${input.period.slice(0, 20)} is not closed`);
  return newEvent(
    'PeriodReopened',
    now,
    { period: input.period, operator, reason, digest: state.digest! },
    { providerId: '-', source: 'ops', aggregateKey: PERIODS_KEY },
  );
}

export interface PeriodVerification {
  period: string;
  sealed: string;
  recomputed: string;
  ok: boolean;
  postingCount: { sealed: number | null; now: number };
}

/**
 * Recomputes the seal of every closed period (in force) from the rows as they are now, chained as they were,
 * and checks the chain: a posting changed, added or removed in a closed month changes its digest.
 */
export async function verifyPeriods(
  pool: pg.Pool,
): Promise<{ periods: PeriodVerification[]; chain: string[] }> {
  const r = await pool.query<{
    period: string;
    digest: string;
    previous_digest: string | null;
    posting_count: number | null;
    statement_ids: string[] | null;
  }>(
    `select period, digest, previous_digest, posting_count, statement_ids from period_events where kind = 'closed' order by event_id`,
  );
  const states = periodStates(await periodEvents(pool));
  const periods: PeriodVerification[] = [];
  for (const c of r.rows) {
    const state = states.get(c.period);
    if (state?.kind !== 'closed' || state.digest !== c.digest) continue; // reopened, or closed again since
    const seal = await sealOf(pool, c.period, c.previous_digest, c.statement_ids ?? []);
    periods.push({
      period: c.period,
      sealed: c.digest,
      recomputed: seal.digest,
      ok: seal.digest === c.digest,
      postingCount: { sealed: c.posting_count, now: seal.postingCount },
    });
  }
  return { periods, chain: chainBreaks(await periodEvents(pool)) };
}
