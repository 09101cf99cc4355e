import { createHash } from 'node:crypto';
import { Decimal, formatDecimal } from '../money/decimal.ts';
import { isPeriod, periodBounds } from '../ledger/periods.ts';

/**
 * The seal of a closed period: a SHA-256 digest over the month's postings and its current statements, in a
 * fixed order and canonical text, that includes the previous close's digest, so the closes form a chain and
 * any later change to a closed month (a posting updated by hand, a line added) changes the recomputed digest.
 * Pure: the rows come in, the digest goes out; src/ops/periods.ts reads them and `period verify` recomputes.
 */

export const SEAL_VERSION = 'swap-ledger seal v1';

/** A posting as sealed: amounts as canonical decimal text, times as ISO-8601 UTC to the millisecond. */
export interface SealedPosting {
  entryId: string;
  line: number;
  entryKind: string;
  providerId: string;
  swapId: string;
  swapVersion: number;
  account: string;
  currency: string;
  amount: string;
  effectiveAt: string;
  recordedAt: string;
}

/** A statement in force for the period, and its lines' outcomes. */
export interface SealedStatement {
  statementId: string;
  providerId: string;
  fileDigest: string;
  lines: readonly { lineNo: number | null; swapId: string; outcome: string }[];
}

const field = (v: string | number | null) =>
  v === null ? '' : String(v).replaceAll('\\', '\\\\').replaceAll('|', '\\|');

/** An incremental seal: postings first (in (entryId, line) order), then statements (by provider, id). */
export class Seal {
  private readonly hash = createHash('sha256');
  private postings = 0;
  private last: string | undefined;
  constructor(period: string, previousDigest: string | null) {
    this.hash.update(`${SEAL_VERSION}\nperiod|${period}\nprevious|${previousDigest ?? ''}\n`);
  }
  posting(p: SealedPosting): void {
    const key = `${p.entryId}:${String(p.line).padStart(6, '0')}`;
    if (this.last !== undefined && key <= this.last)
      throw new Error('sealed postings must come in (entryId, line) order');
    this.last = key;
    this.postings++;
    const amount = formatDecimal(new Decimal(p.amount));
    this.hash.update(
      [
        'posting',
        p.entryId,
        p.line,
        p.entryKind,
        p.providerId,
        p.swapId,
        p.swapVersion,
        p.account,
        p.currency,
        amount,
        p.effectiveAt,
        p.recordedAt,
      ]
        .map(field)
        .join('|') + '\n',
    );
  }
  statement(s: SealedStatement): void {
    this.hash.update(['statement', s.providerId, s.statementId, s.fileDigest].map(field).join('|') + '\n');
    for (const l of s.lines)
      this.hash.update(['line', l.lineNo, l.swapId, l.outcome].map(field).join('|') + '\n');
  }
  get postingCount(): number {
    return this.postings;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** One close or reopen of a period, in log order. */
export interface PeriodEvent {
  kind: 'closed' | 'reopened';
  period: string;
  digest: string | null;
  previousDigest: string | null;
}

/** Where each period stands: closed (with the close in force) or open; closes chain in log order. */
export function periodStates(
  events: readonly PeriodEvent[],
): Map<string, (PeriodEvent & { kind: 'closed' }) | { kind: 'reopened'; period: string }> {
  const states = new Map<string, (PeriodEvent & { kind: 'closed' }) | { kind: 'reopened'; period: string }>();
  for (const e of events)
    states.set(
      e.period,
      e.kind === 'closed' ? (e as PeriodEvent & { kind: 'closed' }) : { kind: 'reopened', period: e.period },
    );
  return states;
}

/** The digest the next close chains to: the latest close's, whatever its period (null before the first). */
export function chainHead(events: readonly PeriodEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.kind === 'closed') return events[i]!.digest;
  return null;
}

/** Breaks of the chain: a close whose previousDigest is not the digest of the close before it. */
export function chainBreaks(events: readonly PeriodEvent[]): string[] {
  const problems: string[] = [];
  let head: string | null = null;
  for (const e of events) {
    if (e.kind !== 'closed') continue;
    if (e.previousDigest !== head)
      problems.push(
        `the close of ${e.period} chains to ${e.previousDigest ?? 'nothing'}, the close before it has ${head ?? 'none'}`,
      );
    head = e.digest;
  }
  return problems;
}

/** Why a period may not be closed now (its own rules; the statements' rule is closeStatementProblems). */
export function closeTimingProblem(
  period: string,
  now: Date,
  events: readonly PeriodEvent[],
): string | undefined {
  if (!isPeriod(period)) return `"${period.slice(0, 20)}" is not a period: YYYY-MM`;
  if (now < periodBounds(period).end)
    return `${period} has not ended yet (it ends ${periodBounds(period).end.toISOString()})`;
  const state = periodStates(events).get(period);
  if (state?.kind === 'closed') return `${period} is closed already (digest ${state.digest})`;
  return undefined;
}

/** A provider's statement in force for the period, reduced to what the close rule reads. */
export interface StatementStanding {
  providerId: string;
  statementId: string | null;
  differences: number;
}

/**
 * The statements' rule of a close: every provider with postings in the month has a statement in force, and
 * its lines all matched, unless the differences are accepted (recorded in the close).
 */
export function closeStatementProblems(
  standing: readonly StatementStanding[],
  acceptDifferences: boolean,
): string[] {
  if (acceptDifferences) return [];
  const problems: string[] = [];
  for (const s of standing) {
    if (s.statementId === null) problems.push(`${s.providerId}: no statement imported for the period`);
    else if (s.differences > 0)
      problems.push(`${s.providerId}: statement ${s.statementId} has ${s.differences} line(s) not matched`);
  }
  return problems;
}
