import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';
import { Decimal, formatDecimal } from '../money/decimal.ts';
import { FINANCE_SCHEMA } from './finance-views.ts';
import type { ReconciliationCheck } from '../events/types.ts';
import { csvRow, type CsvCell } from './csv.ts';
import {
  clientQuery,
  MISMATCH_COLUMNS,
  mismatchCells,
  readMismatches,
  type MismatchRow,
} from './mismatches.ts';

export type { MismatchRow };

/**
 * The finance report of a period: the reconciliation summary (verdict counts, mismatches with their failing
 * checks) and the ledger's figures (referral revenue, volumes per partner and currency). Every figure comes
 * from the finance views; amounts stay decimal text (numeric in Postgres, never a JS number).
 * The period is [from, to): reconciliations by the time of their verdict, ledger figures by effective time,
 * as the journal stands now (corrections recorded later restate the period they are effective in).
 */

export interface ReportPeriod {
  /** Inclusive, ISO-8601 instant. */
  from: string;
  /** Exclusive, ISO-8601 instant. */
  to: string;
}

export interface VerdictCount {
  verdict: string;
  swaps: number;
}

/** A check of a verdict that is not MATCHED, as the SwapReconciled event carries it. */
export type FailingCheck = ReconciliationCheck;

export interface Mismatch {
  swapId: string;
  providerId: string;
  status: string;
  reconciledAt: string;
  checks: FailingCheck[];
}

export interface ReferralRevenue {
  providerId: string;
  currency: string;
  amount: string;
  swaps: number;
}

export interface Volume {
  providerId: string;
  currencyFrom: string;
  currencyTo: string;
  /** Net payins, in currencyFrom. */
  volumeFrom: string;
  /** Net payouts to users, in currencyTo. */
  volumeTo: string;
  swaps: number;
}

export interface FinanceReport {
  period: ReportPeriod;
  verdicts: VerdictCount[];
  mismatches: Mismatch[];
  referralRevenue: ReferralRevenue[];
  volumes: Volume[];
}

const ISO_INSTANT =
  /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}(?::?\d{2})?))?$/;

/**
 * A report boundary: a UTC date (`2026-11-01`, midnight UTC) or an ISO-8601 time with its zone
 * (`Z`, `+01:00`, `+0100`). A time without a zone is refused: it would depend on the machine's zone.
 */
export function parseReportTime(text: string): string {
  const m = ISO_INSTANT.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a UTC date (YYYY-MM-DD) or an ISO-8601 time with a zone`);
  const [, date, time, zone] = m;
  let iso = `${date}T00:00:00Z`;
  if (time) {
    const z =
      zone === 'Z' ? 'Z' : zone!.length === 3 ? `${zone}:00` : `${zone!.slice(0, 3)}:${zone!.slice(-2)}`;
    iso = `${date}T${time.length === 5 ? `${time}:00` : time}${z}`;
  }
  const d = new Date(iso);
  const calendar = new Date(`${date}T00:00:00Z`);
  if (
    Number.isNaN(d.getTime()) ||
    Number.isNaN(calendar.getTime()) ||
    calendar.toISOString().slice(0, 10) !== date
  )
    throw new Error(`"${text}" is not a valid time`);
  return d.toISOString();
}

const amount = (text: string | null): string => formatDecimal(new Decimal(text ?? '0'));

/** Verdicts best to worst (src/reconciler/types.ts VERDICT_ORDER); any other after them. */
const VERDICT_ORDER_SQL = `array_position(array['MATCHED', 'WITHIN_TOLERANCE', 'UNVERIFIABLE', 'MISMATCH'], verdict)`;

export async function financeReport(
  client: pg.ClientBase,
  period: ReportPeriod,
  finance = FINANCE_SCHEMA,
): Promise<FinanceReport> {
  assertIdentifier(finance);
  const bounds = [period.from, period.to];
  if (!(Date.parse(period.from) < Date.parse(period.to)))
    throw new Error(`the period is empty: ${period.from} is not before ${period.to}`);

  const verdicts = await client.query<{ verdict: string; swaps: number }>(
    `select verdict, count(*)::int as swaps from ${finance}.reconciliation_verdicts
      where reconciled_at >= $1 and reconciled_at < $2
      group by verdict order by ${VERDICT_ORDER_SQL} nulls last, verdict`,
    bounds,
  );

  const mismatchRows = await readMismatches(clientQuery(client), finance, period);
  // A swap is (provider, swapId): two partners may issue the same swapId, and their checks never merge.
  const mismatches: Mismatch[] = [];
  for (const r of mismatchRows) {
    let m = mismatches.at(-1);
    if (!m || m.swapId !== r.swap_id || m.providerId !== r.provider_id) {
      m = {
        swapId: r.swap_id,
        providerId: r.provider_id,
        status: r.status,
        reconciledAt: r.reconciled_at,
        checks: [],
      };
      mismatches.push(m);
    }
    m.checks.push({
      name: r.check_name,
      verdict: r.check_verdict,
      expected: r.expected,
      actual: r.actual,
      delta: r.delta,
      tolerance: r.tolerance,
      detail: r.detail,
    });
  }

  const revenue = await client.query<{
    provider_id: string;
    currency: string;
    amount: string;
    swaps: number;
  }>(
    `select provider_id, currency, sum(amount)::text as amount, count(distinct swap_id)::int as swaps
       from ${finance}.postings
      where account = 'referral_fees_receivable' and effective_at >= $1 and effective_at < $2
      group by provider_id, currency order by provider_id, currency`,
    bounds,
  );

  // As finance.volume_daily, over the period instead of a day.
  const volumes = await client.query<{
    provider_id: string;
    currency_from: string;
    currency_to: string;
    volume_from: string;
    volume_to: string;
    swaps: number;
  }>(
    `select provider_id, pair_from as currency_from, pair_to as currency_to,
            sum(volume_from)::text as volume_from, sum(volume_to)::text as volume_to,
            (count(*) filter (where volume_from <> 0 or volume_to <> 0))::int as swaps
       from (select provider_id, pair_from, pair_to, swap_id,
                    coalesce(-sum(amount) filter (where account = 'user_payin' and currency = pair_from), 0) as volume_from,
                    coalesce(sum(amount) filter (where account = 'user_payout' and currency = pair_to), 0) as volume_to
               from ${finance}.postings
              where account in ('user_payin', 'user_payout') and effective_at >= $1 and effective_at < $2
              group by provider_id, pair_from, pair_to, swap_id) per_swap
      group by provider_id, pair_from, pair_to order by provider_id, pair_from, pair_to`,
    bounds,
  );

  return {
    period: { from: new Date(period.from).toISOString(), to: new Date(period.to).toISOString() },
    verdicts: verdicts.rows.map((r) => ({ verdict: r.verdict, swaps: r.swaps })),
    mismatches,
    referralRevenue: revenue.rows.map((r) => ({
      providerId: r.provider_id,
      currency: r.currency,
      amount: amount(r.amount),
      swaps: r.swaps,
    })),
    volumes: volumes.rows.map((r) => ({
      providerId: r.provider_id,
      currencyFrom: r.currency_from,
      currencyTo: r.currency_to,
      volumeFrom: amount(r.volume_from),
      volumeTo: amount(r.volume_to),
      swaps: r.swaps,
    })),
  };
}

// ---- rendering ----

type Cell = CsvCell;
interface Section {
  name: string;
  header: string[];
  /** Columns aligned right (numbers). */
  right: number[];
  rows: Cell[][];
}

function sections(r: FinanceReport): Section[] {
  return [
    {
      name: 'verdicts',
      header: ['verdict', 'swaps'],
      right: [1],
      rows: r.verdicts.map((v) => [v.verdict, v.swaps]),
    },
    {
      name: 'mismatches',
      header: [...MISMATCH_COLUMNS],
      right: [],
      rows: r.mismatches.flatMap((m) =>
        m.checks.map((c) =>
          mismatchCells({
            provider_id: m.providerId,
            swap_id: m.swapId,
            status: m.status,
            reconciled_at: m.reconciledAt,
            check_name: c.name,
            check_verdict: c.verdict,
            expected: c.expected,
            actual: c.actual,
            delta: c.delta,
            tolerance: c.tolerance,
            detail: c.detail,
          }),
        ),
      ),
    },
    {
      name: 'referral_revenue',
      header: ['provider_id', 'currency', 'referral_revenue', 'swaps'],
      right: [2, 3],
      rows: r.referralRevenue.map((x) => [x.providerId, x.currency, x.amount, x.swaps]),
    },
    {
      name: 'volumes',
      header: ['provider_id', 'currency_from', 'currency_to', 'volume_from', 'volume_to', 'swaps'],
      right: [3, 4, 5],
      rows: r.volumes.map((x) => [
        x.providerId,
        x.currencyFrom,
        x.currencyTo,
        x.volumeFrom,
        x.volumeTo,
        x.swaps,
      ]),
    },
  ];
}

const TITLES: Record<string, string> = {
  verdicts: 'Reconciliation verdicts (by time of verdict)',
  mismatches: 'Mismatches and their failing checks',
  referral_revenue: 'Referral revenue per partner and currency (by effective time)',
  volumes: 'Volume per partner and pair (net payins and payouts, by effective time)',
};

/** Plain-text tables, one per section, for a terminal. */
export function formatReportTable(r: FinanceReport): string[] {
  const out = [`Finance report  ${r.period.from} .. ${r.period.to} (from inclusive, to exclusive)`];
  for (const s of sections(r)) {
    out.push('', TITLES[s.name]!);
    if (s.rows.length === 0) {
      out.push('  (none)');
      continue;
    }
    const text = s.rows.map((row) =>
      row.map((c) => (c === null || c === undefined ? '' : String(c).replace(/\s+/g, ' '))),
    );
    const widths = s.header.map((h, i) => Math.max(h.length, ...text.map((row) => row[i]!.length)));
    const line = (cells: string[]) =>
      '  ' +
      cells
        .map((c, i) => (s.right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd();
    out.push(line(s.header), line(widths.map((w) => '-'.repeat(w))), ...text.map(line));
  }
  return out;
}

/**
 * CSV, one block per section separated by an empty line; each block's header starts with the column
 * `section`, and every row repeats the section's name, so a block can be filtered on its own. Every record
 * goes through the finance exports' one writer (src/ledger/csv.ts: RFC 4180, formulas neutralised).
 */
export function formatReportCsv(r: FinanceReport): string[] {
  const out: string[] = [];
  out.push(csvRow(['section', 'from', 'to']), csvRow(['period', r.period.from, r.period.to]));
  for (const s of sections(r)) {
    out.push('', csvRow(['section', ...s.header]));
    for (const row of s.rows) out.push(csvRow([s.name, ...row]));
  }
  return out;
}
