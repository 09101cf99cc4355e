import { createHash } from 'node:crypto';
import type pg from 'pg';
import { newEvent } from '../events/keys.ts';
import type { StatementLineMatch, SwapEventOf } from '../events/types.ts';
import { isPeriod, periodBounds, postingPeriodSql } from '../ledger/periods.ts';
import type { DirectionalTolerance, FeeKind } from '../money/tolerance.ts';
import { readStatement, type StatementLayout, type StatementMappings } from '../monthend/layout.ts';
import { matchStatement, outcomeCounts, type LedgerSwap, type MatchedLine } from '../monthend/match.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { OperatorInputError } from './operator-events.ts';

/**
 * `statement import`: reads a partner's statement file, matches it to the projection's ledger as it stands
 * (src/monthend/match.ts) and builds the StatementImported event that records it all. Nothing is stored
 * here: the caller appends the event, and a refused file (StatementFileError) appends nothing.
 */

/** The aggregate key of a provider's statements of a period: one partition, in import order. */
export const statementKey = (providerId: string, period: string) => `statement:${providerId}:${period}`;

/** The provider's swaps the statement names, and those with postings booked in the period. */
export async function ledgerSwapsFor(
  pool: pg.Pool | pg.ClientBase,
  providerId: string,
  period: string,
  swapIds: readonly string[],
): Promise<LedgerSwap[]> {
  const { start, end } = periodBounds(period);
  const r = await pool.query<{
    swap_id: string;
    status: string;
    final: boolean;
    final_at: string | null;
    currency_from: string;
    amount_from: string | null;
    currency_to: string;
    amount_to: string | null;
    provider_fees: string | null;
    referral_fees: string | null;
    payout_network_fees: string | null;
    booked: boolean;
    prior_period: string | null;
  }>(
    `with booked as (
       select p.swap_id, min(to_char(p.effective_at at time zone 'UTC', 'YYYY-MM')) as effective_period
         from ledger_postings p
        where p.provider_id = $1 and p.recorded_at >= $3 and p.recorded_at < $4
        group by p.swap_id)
     select s.swap_id, s.status, s.final,
            to_char(s.final_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as final_at,
            s.payload_currency_from as currency_from, s.amount_from::text, s.payload_currency_to as currency_to,
            s.amount_to::text, s.provider_fees::text, s.referral_fees::text, s.payout_network_fees::text,
            b.swap_id is not null as booked,
            case when b.effective_period < $5 then b.effective_period end as prior_period
       from swaps s left join booked b on b.swap_id = s.swap_id
      where s.provider_id = $1 and (s.swap_id = any($2::text[]) or b.swap_id is not null)`,
    [providerId, swapIds, start.toISOString(), end.toISOString(), period],
  );
  return r.rows.map((s) => ({
    swapId: s.swap_id,
    status: s.status,
    final: s.final,
    finalAt: s.final_at,
    currencyFrom: s.currency_from,
    amountFrom: s.amount_from,
    currencyTo: s.currency_to,
    amountTo: s.amount_to,
    providerFees: s.provider_fees,
    referralFees: s.referral_fees,
    payoutNetworkFees: s.payout_network_fees,
    bookedInPeriod: s.booked,
    priorPeriod: s.prior_period,
  }));
}

/**
 * Whether statement `alias` is in force: no later import (by event id, a UUIDv7 of the import's time) for
 * its provider and period. Two imports made at once both name the statement they saw in force in
 * `supersedes`; the later one is in force, and both stay visible.
 */
export const statementInForceSql = (alias: string) =>
  `not exists (select 1 from statements n where n.provider_id = ${alias}.provider_id and n.period = ${alias}.period and n.statement_id > ${alias}.statement_id)`;

/** The statement in force of a provider's period: its latest import. */
export async function statementInForce(
  pool: pg.Pool | pg.ClientBase,
  providerId: string,
  period: string,
): Promise<{ statementId: string; fileDigest: string } | undefined> {
  const r = await pool.query<{ statement_id: string; file_digest: string }>(
    `select s.statement_id, s.file_digest from statements s
      where s.provider_id = $1 and s.period = $2 and ${statementInForceSql('s')}`,
    [providerId, period],
  );
  const row = r.rows[0];
  return row && { statementId: row.statement_id, fileDigest: row.file_digest };
}

const toEventLine = (m: MatchedLine): StatementLineMatch => ({
  lineNo: m.lineNo,
  swapId: m.swapId,
  outcome: m.outcome,
  statusWord: m.statement?.statusWord ?? null,
  status: m.statement?.status ?? null,
  finishedAt: m.statement?.finishedAt ?? null,
  currencyFrom: m.statement?.currencyFrom ?? null,
  amountFrom: m.statement?.amountFrom ?? null,
  currencyTo: m.statement?.currencyTo ?? null,
  amountTo: m.statement?.amountTo ?? null,
  providerFee: m.statement?.providerFee ?? null,
  referralFee: m.statement?.referralFee ?? null,
  payoutNetworkFee: m.statement?.payoutNetworkFee ?? null,
  ledgerStatus: m.ledgerStatus,
  priorPeriod: m.priorPeriod,
  differences: m.differences,
});

export interface StatementImportInput {
  providerId: string;
  period: string;
  fileName: string;
  bytes: Buffer;
  layout: StatementLayout;
  layoutName: 'default' | 'provider';
  mappings: StatementMappings;
  fees: Readonly<Record<FeeKind, DirectionalTolerance>>;
  by: string | undefined;
  reason: string | undefined;
}

/**
 * The StatementImported event of a file, or an error naming why not (StatementFileError: the lines and
 * fields; OperatorInputError: the flags). Reads the ledger; appends nothing.
 */
export async function statementImportEvent(
  pool: pg.Pool,
  input: StatementImportInput,
  now = new Date(),
): Promise<{ event: SwapEventOf<'StatementImported'>; counts: Record<string, number> }> {
  if (!isPeriod(input.period))
    throw new OperatorInputError(`--period must be YYYY-MM, got "${input.period.slice(0, 20)}"`);
  const operator = input.by?.trim();
  if (!operator) throw new OperatorInputError('--by is required');
  for (const [flag, v] of [
    ['--by', operator],
    ['--reason', input.reason],
  ] as const) {
    const problem = v === undefined ? undefined : partnerTextProblem(v, 2000);
    if (problem) throw new OperatorInputError(`${flag} ${problem}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(input.bytes);
  } catch {
    throw new OperatorInputError(`${input.fileName}: not UTF-8 text`);
  }
  const lines = readStatement(text, input.layout, input.mappings);
  const ledger = await ledgerSwapsFor(
    pool,
    input.providerId,
    input.period,
    lines.map((l) => l.swapId),
  );
  const matched = matchStatement(lines, ledger, input.fees);
  const inForce = await statementInForce(pool, input.providerId, input.period);
  const event = newEvent(
    'StatementImported',
    now,
    {
      period: input.period,
      fileName: input.fileName.slice(-200),
      fileDigest: createHash('sha256').update(input.bytes).digest('hex'),
      layout: input.layoutName,
      operator,
      reason: input.reason?.trim() || null,
      supersedes: inForce?.statementId ?? null,
      lines: matched.map(toEventLine),
    },
    {
      providerId: input.providerId,
      source: 'ops',
      aggregateKey: statementKey(input.providerId, input.period),
    },
  );
  return { event, counts: outcomeCounts(matched) };
}

/** Each provider with postings in the period or a statement for it, and where its statement in force stands. */
export async function statementStanding(
  pool: pg.Pool | pg.ClientBase,
  period: string,
): Promise<{ providerId: string; statementId: string | null; differences: number }[]> {
  const r = await pool.query<{ provider_id: string; statement_id: string | null; differences: string }>(
    `with providers as (
       select distinct provider_id from ledger_postings p where ${postingPeriodSql('p')} = $1
       union select provider_id from statements where period = $1),
     in_force as (
       select s.* from statements s
        where s.period = $1 and ${statementInForceSql('s')})
     select v.provider_id, f.statement_id,
            (select count(*) from statement_lines l where l.statement_id = f.statement_id and l.outcome <> 'matched') as differences
       from providers v left join in_force f on f.provider_id = v.provider_id
      order by v.provider_id`,
    [period],
  );
  return r.rows.map((x) => ({
    providerId: x.provider_id,
    statementId: x.statement_id,
    differences: Number(x.differences),
  }));
}
