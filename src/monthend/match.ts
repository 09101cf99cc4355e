import { Decimal, formatDecimal } from '../money/decimal.ts';
import { exactDifference, InexactArithmeticError } from '../money/exact.ts';
import { judgeFee, type DirectionalTolerance, type FeeKind } from '../money/tolerance.ts';
import type { StatementLine } from './layout.ts';

/**
 * The statement matcher: a partner's statement lines against the ledger, on (provider, swapId). Pure. A
 * statement is evidence, not truth: differences are shown, never applied to a swap. Fees are judged with the
 * reconciliation tolerances (directional: referral down, provider and network fee up are the platform's
 * disfavour); amounts and currencies must be equal.
 */

/** What the ledger holds of one swap of the provider (the projection's swaps row, and its booking). */
export interface LedgerSwap {
  swapId: string;
  status: string;
  final: boolean;
  finalAt: string | null;
  currencyFrom: string;
  amountFrom: string | null;
  currencyTo: string;
  amountTo: string | null;
  providerFees: string | null;
  referralFees: string | null;
  payoutNetworkFees: string | null;
  /** The swap has postings booked in the statement's period (its month's ledger). */
  bookedInPeriod: boolean;
  /** The earlier period those postings adjust (a late fact on a swap final before), or null. */
  priorPeriod: string | null;
}

export const MATCH_OUTCOMES = [
  'matched',
  'statement_only',
  'ledger_only',
  'status_differs',
  'amount_differs',
] as const;
export type MatchOutcome = (typeof MATCH_OUTCOMES)[number];

export interface Difference {
  field: string;
  ledger: string | null;
  statement: string | null;
  /** statement − ledger, when both are amounts. */
  delta: string | null;
  /** The allowance of the direction moved (fees), null for an exact comparison. */
  tolerance: string | null;
  /** 'favour' | 'disfavour' (of the platform) for a fee that moved. */
  direction: string | null;
  /** within_tolerance: shown, not a difference of the line; differs: it is; unverifiable: needs rounding. */
  verdict: 'within_tolerance' | 'differs' | 'unverifiable';
}

export interface MatchedLine {
  /** The line of the file; null for a ledger_only entry. */
  lineNo: number | null;
  swapId: string;
  outcome: MatchOutcome;
  statement: StatementLine | null;
  ledgerStatus: string | null;
  priorPeriod: string | null;
  differences: Difference[];
}

const FEES: readonly { field: keyof StatementLine & string; ledger: keyof LedgerSwap; kind: FeeKind }[] = [
  { field: 'providerFee', ledger: 'providerFees', kind: 'provider' },
  { field: 'referralFee', ledger: 'referralFees', kind: 'referral' },
  { field: 'payoutNetworkFee', ledger: 'payoutNetworkFees', kind: 'payoutNetwork' },
];
const EXACT: readonly { field: keyof StatementLine & string; ledger: keyof LedgerSwap; amount: boolean }[] = [
  { field: 'currencyFrom', ledger: 'currencyFrom', amount: false },
  { field: 'amountFrom', ledger: 'amountFrom', amount: true },
  { field: 'currencyTo', ledger: 'currencyTo', amount: false },
  { field: 'amountTo', ledger: 'amountTo', amount: true },
];

const same = (a: string, b: string, amount: boolean) => (amount ? new Decimal(a).eq(b) : a === b);

function compare(
  line: StatementLine,
  swap: LedgerSwap,
  fees: Readonly<Record<FeeKind, DirectionalTolerance>>,
) {
  const out: Difference[] = [];
  for (const { field, ledger, amount } of EXACT) {
    const stated = line[field] as string | null;
    if (stated === null) continue; // the partner's layout has no such column, or the cell is empty
    const known = swap[ledger] as string | null;
    if (known !== null && same(stated, known, amount)) continue;
    let delta: string | null = null;
    let verdict: Difference['verdict'] = 'differs';
    if (amount && known !== null)
      try {
        delta = formatDecimal(exactDifference(new Decimal(stated), new Decimal(known)));
      } catch (e) {
        if (!(e instanceof InexactArithmeticError)) throw e;
        verdict = 'unverifiable';
      }
    out.push({ field, ledger: known, statement: stated, delta, tolerance: null, direction: null, verdict });
  }
  for (const { field, ledger, kind } of FEES) {
    const stated = line[field] as string | null;
    if (stated === null) continue;
    const known = swap[ledger] as string | null;
    if (known === null) {
      out.push({
        field,
        ledger: null,
        statement: stated,
        delta: null,
        tolerance: null,
        direction: null,
        verdict: 'differs',
      });
      continue;
    }
    try {
      const j = judgeFee(kind, new Decimal(known), new Decimal(stated), fees[kind]);
      if (!j.direction) continue;
      out.push({
        field,
        ledger: known,
        statement: stated,
        delta: formatDecimal(j.delta),
        tolerance: j.allowance ? formatDecimal(j.allowance) : null,
        direction: j.direction,
        verdict: j.within ? 'within_tolerance' : 'differs',
      });
    } catch (e) {
      if (!(e instanceof InexactArithmeticError)) throw e;
      out.push({
        field,
        ledger: known,
        statement: stated,
        delta: null,
        tolerance: null,
        direction: null,
        verdict: 'unverifiable',
      });
    }
  }
  return out;
}

/**
 * Matches a statement's lines to the provider's ledger swaps. `ledger` holds the swaps the lines name and
 * the swaps booked in the statement's period; a FINISHED one booked in the period that no line names is
 * ledger_only. Lines come out in file order, then ledger_only entries by swapId.
 */
export function matchStatement(
  lines: readonly StatementLine[],
  ledger: readonly LedgerSwap[],
  fees: Readonly<Record<FeeKind, DirectionalTolerance>>,
): MatchedLine[] {
  const bySwap = new Map(ledger.map((s) => [s.swapId, s]));
  const listed = new Set<string>();
  const out: MatchedLine[] = [];
  for (const line of lines) {
    listed.add(line.swapId);
    const swap = bySwap.get(line.swapId);
    if (!swap) {
      out.push({
        lineNo: line.lineNo,
        swapId: line.swapId,
        outcome: 'statement_only',
        statement: line,
        ledgerStatus: null,
        priorPeriod: null,
        differences: [],
      });
      continue;
    }
    const differences = compare(line, swap, fees);
    const statusDiffers = line.status !== swap.status;
    if (statusDiffers)
      differences.unshift({
        field: 'status',
        ledger: swap.status,
        statement: line.status,
        delta: null,
        tolerance: null,
        direction: null,
        verdict: 'differs',
      });
    const outcome: MatchOutcome = statusDiffers
      ? 'status_differs'
      : differences.some((d) => d.verdict !== 'within_tolerance')
        ? 'amount_differs'
        : 'matched';
    out.push({
      lineNo: line.lineNo,
      swapId: line.swapId,
      outcome,
      statement: line,
      ledgerStatus: swap.status,
      priorPeriod: swap.priorPeriod,
      differences,
    });
  }
  const missing = ledger
    .filter((s) => s.bookedInPeriod && s.final && s.status === 'FINISHED' && !listed.has(s.swapId))
    .sort((a, b) => (a.swapId < b.swapId ? -1 : a.swapId > b.swapId ? 1 : 0));
  for (const s of missing)
    out.push({
      lineNo: null,
      swapId: s.swapId,
      outcome: 'ledger_only',
      statement: null,
      ledgerStatus: s.status,
      priorPeriod: s.priorPeriod,
      differences: [],
    });
  return out;
}

/** How many lines of each outcome. */
export function outcomeCounts(lines: readonly { outcome: MatchOutcome }[]): Record<MatchOutcome, number> {
  const counts = Object.fromEntries(MATCH_OUTCOMES.map((o) => [o, 0])) as Record<MatchOutcome, number>;
  for (const l of lines) counts[l.outcome]++;
  return counts;
}

/** A statement is reconciled when every line matched (within tolerance counts as matched). */
export const isReconciled = (lines: readonly { outcome: MatchOutcome }[]) =>
  lines.every((l) => l.outcome === 'matched');
