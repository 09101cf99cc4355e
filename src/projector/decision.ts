import type { Changes, JournalOutcome } from './state.ts';

/**
 * What folding one event decided: its journal outcome, why, and what it changed. (A reconciliation's
 * judgement is a Verdict, src/reconciler/types.ts; the fold's is a decision.)
 */
export interface FoldDecision {
  outcome: JournalOutcome;
  reason?: string;
  changes?: Changes;
}

export const applied = (changes: Changes, reason?: string): FoldDecision => ({
  outcome: 'applied',
  changes,
  reason,
});
export const rejected = (reason: string): FoldDecision => ({ outcome: 'rejected', reason });
export const noop = (reason: string): FoldDecision => ({ outcome: 'noop', reason });
export const contradicted = (changes: Changes, reason: string): FoldDecision => ({
  outcome: 'contradicted',
  changes,
  reason,
});

/**
 * A stable kind of a rejection reason, for metrics and alerts (the reason itself is free text with ids).
 * Reasons are written in this folder; a new one without a kind here counts as `other`.
 */
export const REJECTION_KINDS = [
  'input_bounds',
  'database',
  'fold_error',
  'unknown_swap',
  'duplicate',
  'not_final',
  'trade_method',
  'request_state',
  'dead_letter',
  'reapply',
  'case_action',
  'other',
] as const;
export type RejectionKind = (typeof REJECTION_KINDS)[number];

const KIND_OF: readonly [RegExp, RejectionKind][] = [
  [/^refused by the fold's input bounds/, 'input_bounds'],
  [/^the database refused/, 'database'],
  [/^the (fold|projector) failed on the event/, 'fold_error'],
  [/^reapply of /, 'reapply'],
  [/^unknown swap |carries no swapId/, 'unknown_swap'],
  [/was already (created|recorded)/, 'duplicate'],
  [/^ingest saw the swap final/, 'not_final'],
  [/^trade method /, 'trade_method'],
  [/^unknown request |already ended as/, 'request_state'],
  [/dead letter/, 'dead_letter'],
  [/^case action refused/, 'case_action'],
];

export function rejectionKind(reason: string | null | undefined): RejectionKind {
  if (!reason) return 'other';
  return KIND_OF.find(([re]) => re.test(reason))?.[1] ?? 'other';
}
