import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';
import type { CsvCell } from './csv.ts';

/**
 * The one reader of finance.reconciliation_mismatches, shared by the console (its Reconciliation page and
 * /reconciliation/mismatches.csv) and `swap-ledger report`, with one column set: a swap is
 * (provider_id, swap_id), and a check's name is `check_name`, as the view calls it.
 */

/** One failing check of a swap whose current verdict is MISMATCH (finance.reconciliation_mismatches). */
export interface MismatchRow {
  provider_id: string;
  swap_id: string;
  status: string;
  /** ISO-8601 UTC with milliseconds (`2026-11-03T15:00:00.000Z`). */
  reconciled_at: string;
  check_name: string;
  check_verdict: string;
  expected: string | null;
  actual: string | null;
  delta: string | null;
  tolerance: string | null;
  detail: string | null;
}

/** The columns of every mismatch export, in their order (the header of both CSV exports). */
export const MISMATCH_COLUMNS: readonly (keyof MismatchRow)[] = Object.freeze([
  'provider_id',
  'swap_id',
  'status',
  'reconciled_at',
  'check_name',
  'check_verdict',
  'expected',
  'actual',
  'delta',
  'tolerance',
  'detail',
]);

/** A row's cells in MISMATCH_COLUMNS order. */
export function mismatchCells(row: MismatchRow): CsvCell[] {
  return MISMATCH_COLUMNS.map((c) => row[c]);
}

/** Runs a finance query and returns its rows (the console's role-taking query, or a plain client's). */
export type FinanceQuery = <R extends pg.QueryResultRow>(sql: string, params: unknown[]) => Promise<R[]>;

export function clientQuery(client: pg.ClientBase): FinanceQuery {
  return async <R extends pg.QueryResultRow>(sql: string, params: unknown[]) =>
    (await client.query<R>(sql, params)).rows;
}

export interface MismatchQuery {
  /** Verdicts at or after this instant (ISO-8601). */
  from?: string;
  /** Verdicts before this instant (ISO-8601). */
  to?: string;
  /** Newest verdict first (the console's page); default oldest first (a report). */
  newestFirst?: boolean;
}

/**
 * The failing checks of every swap whose current verdict is MISMATCH, each swap's checks together and in
 * their order, swaps ordered by verdict time, then provider and swap id. NOT_APPLICABLE checks are not
 * failing and never appear (the view leaves them out).
 */
export async function readMismatches(
  query: FinanceQuery,
  finance: string,
  q: MismatchQuery = {},
): Promise<MismatchRow[]> {
  assertIdentifier(finance);
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.from !== undefined) where.push(`reconciled_at >= $${params.push(q.from)}`);
  if (q.to !== undefined) where.push(`reconciled_at < $${params.push(q.to)}`);
  const dir = q.newestFirst ? 'desc' : 'asc';
  return query<MismatchRow>(
    `select provider_id, swap_id, status,
            to_char(reconciled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as reconciled_at,
            check_name, check_verdict, expected, actual, delta, tolerance, detail
       from ${finance}.reconciliation_mismatches
      ${where.length ? `where ${where.join(' and ')}` : ''}
      order by reconciliation_mismatches.reconciled_at ${dir}, provider_id, swap_id, check_no`,
    params,
  );
}
