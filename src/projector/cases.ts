import type { SwapEvent, SwapEventOf } from '../events/types.ts';
import { swapKey } from '../events/keys.ts';
import {
  actStep,
  approvedWriteOff,
  CaseRefusal,
  exceptionStep,
  verdictStep,
  type CaseHistoryEntry,
  type CaseRecord,
  type VerdictFacts,
  type WriteOffProposal,
} from '../cases/machine.ts';
import { writeOffPostings } from '../ledger/postings.ts';
import type { CaseRow, SwapRow, WorkingSet } from './state.ts';
import { applied, rejected, type FoldDecision } from './decision.ts';

/**
 * The fold of cases (src/cases/machine.ts): a swap's current verdict and its exceptions open, settle and
 * reopen its case; an operator's CaseActed moves it, or is journaled as rejected with the machine's reason
 * (nothing changes). An approved write-off posts its entry. Pure, like every fold.
 */

export function caseOfRow(row: CaseRow | undefined): CaseRecord | undefined {
  if (!row) return undefined;
  return {
    state: row.state as CaseRecord['state'],
    outcome: row.outcome as CaseRecord['outcome'],
    trigger: row.trigger as CaseRecord['trigger'],
    triggerEventId: row.triggerEventId,
    openedAt: row.openedAt,
    openings: row.openings,
    resolvedAt: row.resolvedAt,
    amountAtStake: row.amountAtStake,
    stakeCurrency: row.stakeCurrency,
    failing: row.failing,
    pendingWriteOff: row.pendingWriteOff as WriteOffProposal | null,
    resolution: row.resolution as Record<string, string> | null,
    history: row.history as CaseHistoryEntry[],
  };
}

function store(ws: WorkingSet, swap: SwapRow, event: SwapEvent, c: CaseRecord): void {
  const key = swapKey(swap.providerId, swap.swapId);
  ws.cases.set(key, {
    providerId: swap.providerId,
    swapId: swap.swapId,
    ...c,
    lastEventId: event.eventId,
    updatedAt: event.recordedAt,
  });
  ws.dirty.cases.add(key);
}

const caseOf = (ws: WorkingSet, swap: SwapRow) =>
  caseOfRow(ws.cases.get(swapKey(swap.providerId, swap.swapId)));

/** A new current verdict of the swap (never one that went to the history only). */
export function caseOnVerdict(
  ws: WorkingSet,
  event: SwapEventOf<'SwapReconciled'>,
  swap: SwapRow,
): string | undefined {
  const facts: VerdictFacts = {
    eventId: event.eventId,
    at: event.occurredAt,
    verdict: event.payload.verdict,
    evidenceDeadlinePassed: event.payload.evidenceDeadlinePassed === true,
    checks: event.payload.checks,
    currencyTo: swap.payloadCurrencyTo,
  };
  const before = caseOf(ws, swap);
  const after = verdictStep(before, facts);
  if (!after) return undefined;
  store(ws, swap, event, after);
  return after.history.at(-1)!.step;
}

/** A report contradicting the final swap: an exception, which opens a case. */
export function caseOnException(ws: WorkingSet, event: SwapEvent, swap: SwapRow, reason: string): void {
  const after = exceptionStep(caseOf(ws, swap), {
    eventId: event.eventId,
    at: event.occurredAt,
    reason,
  });
  if (after) store(ws, swap, event, after);
}

export function foldCaseActed(ws: WorkingSet, event: SwapEventOf<'CaseActed'>): FoldDecision {
  if (!event.swapId) return rejected('CaseActed carries no swapId');
  const swap = ws.swaps.get(swapKey(event.providerId, event.swapId));
  if (!swap)
    return rejected(`unknown swap ${event.providerId}/${event.swapId}: no SwapCreated was applied for it`);
  const before = caseOf(ws, swap);
  let after: CaseRecord;
  try {
    after = actStep(
      before,
      event.payload,
      { eventId: event.eventId, at: event.occurredAt },
      {
        currencyFrom: swap.payloadCurrencyFrom,
        currencyTo: swap.payloadCurrencyTo,
        lastCorrectionEventId: swap.lastCorrectionEventId,
      },
    );
  } catch (e) {
    if (e instanceof CaseRefusal) return rejected(`case action refused: ${e.message}`);
    throw e;
  }
  store(ws, swap, event, after);
  const writeOff = approvedWriteOff(after);
  if (writeOff) {
    const key = swapKey(swap.providerId, swap.swapId);
    const rows = writeOffPostings(event, swap, writeOff);
    ws.postings.set(key, [...(ws.postings.get(key) ?? []), ...rows]);
    ws.newPostings.push(...rows);
  }
  return applied(
    { 'case.state': [before?.state ?? null, after.state] },
    `${event.payload.action} by ${after.history.at(-1)!.operator}${after.outcome ? `: ${after.outcome}` : ''}`,
  );
}
