import type { Changes, JournalOutcome } from './state.ts';

/** What folding one event decided: its journal outcome, why, and what it changed. */
export interface Verdict {
  outcome: JournalOutcome;
  reason?: string;
  changes?: Changes;
}

export const applied = (changes: Changes, reason?: string): Verdict => ({
  outcome: 'applied',
  changes,
  reason,
});
export const rejected = (reason: string): Verdict => ({ outcome: 'rejected', reason });
export const noop = (reason: string): Verdict => ({ outcome: 'noop', reason });
export const contradicted = (changes: Changes, reason: string): Verdict => ({
  outcome: 'contradicted',
  changes,
  reason,
});
