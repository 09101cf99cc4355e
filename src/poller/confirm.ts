import type { StatusReported } from '../events/types.ts';
import {
  reportClass,
  reportValues,
  REPORT_MONEY,
  type ReportField,
  type ReportValues,
} from '../swap/report.ts';

/**
 * The rules of confirming polls, pure (DESIGN "Status rules"): a swap made final by a webhook is confirmed
 * by GET /status until the partner reports that same final status with every figure the outcome needs,
 * with backoff, up to a deadline. What the poller does with a confirming answer (append, record) is in
 * confirming.ts; here only what the answer means and when to ask again.
 */

/** About 1 min, doubling, capped at 1 h. */
export const CONFIRM_BACKOFF = { baseMs: 60_000, maxMs: 3_600_000 } as const;
/** Default of POLL_CONFIRM_DEADLINE_HOURS: confirming stops 48 h after the swap became final. */
export const CONFIRM_DEADLINE_HOURS = 48;

/** Where confirming a swap stands: still asking, confirmed by a complete answer, or given up at the deadline. */
export type ConfirmationState = 'confirming' | 'confirmed' | 'abandoned';

/**
 * The figures a final outcome needs known: the amount and the three fees, and its hashes (FINISHED: the
 * payin and the payout; REFUNDED: the payin and the refund, which a poll maps from the partner's
 * payoutTransactionId, see pollReport in src/swap/report.ts). Another final status a provider configures needs the
 * money figures only.
 */
export function neededFigures(status: string): ReportField[] {
  const money: ReportField[] = [...REPORT_MONEY];
  if (status === 'FINISHED') return [...money, 'payinTransactionId', 'payoutTransactionId'];
  if (status === 'REFUNDED') return [...money, 'payinTransactionId', 'refundTransactionId'];
  return money;
}

/** The figures `status` needs that `values` leave unknown, in neededFigures order. */
export function missingFigures(values: ReportValues, status: string): ReportField[] {
  return neededFigures(status).filter((f) => values[f] === null);
}

export interface ConfirmationJudgement {
  /** The answer names an open or closed status (PENDING, EXPIRED after FINISHED): a lagging endpoint. */
  readonly stale: boolean;
  /** The answer names another final status than the swap's (a contradiction, appended as such). */
  readonly otherOutcome: boolean;
  /** The same final status with every needed figure known: confirming ends. */
  readonly complete: boolean;
  /** Needed figures still unknown on the swap once this answer is folded (what it fills counts as known). */
  readonly missing: ReportField[];
}

/**
 * What a confirming answer means for a final swap. Only the swap's own final status with every needed figure
 * known confirms it; a stale, blank or other-outcome answer does not. A figure the answer contradicts is
 * known (the conflict is the fold's to record); only a same-outcome answer fills an unknown one.
 */
export function judgeConfirmation(
  swap: { readonly status: string } & ReportValues,
  report: StatusReported,
): ConfirmationJudgement {
  const stale = reportClass(report) !== 'final';
  const otherOutcome = !stale && report.status !== swap.status;
  const answered = reportValues(report);
  const fills = !stale && !otherOutcome;
  const complete = fills && missingFigures(answered, swap.status).length === 0;
  const merged = { ...swap } as ReportValues;
  if (fills) for (const f of neededFigures(swap.status)) merged[f] = swap[f] ?? answered[f];
  return { stale, otherOutcome, complete, missing: missingFigures(merged, swap.status) };
}

/** The wait after the `attempts`-th answered confirming poll: base * 2^(attempts - 1), capped. */
export function confirmBackoffMs(
  attempts: number,
  backoff: { readonly baseMs: number; readonly maxMs: number } = CONFIRM_BACKOFF,
): number {
  if (attempts <= 0) return 0;
  // 2^30 is far past any cap; bounding the exponent keeps the number finite.
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(attempts - 1, 30));
}

/**
 * When a swap still confirming after its `attempts`-th answered poll is asked again: after the backoff, but
 * never past the deadline (where it is given up, at once if the deadline has passed already).
 */
export function nextConfirmationAt(
  nowMs: number,
  attempts: number,
  deadlineAtMs: number,
  backoff?: { readonly baseMs: number; readonly maxMs: number },
): number {
  return Math.min(nowMs + confirmBackoffMs(attempts, backoff), deadlineAtMs);
}

/** A swap's confirmation deadline: `deadlineMs` after it became final. */
export function confirmationDeadline(finalAt: string, deadlineMs: number): number {
  return Date.parse(finalAt) + deadlineMs;
}
