import type { PayloadByType, SwapEvent, SwapEventOf } from '../events/types.ts';
import { swapKey } from '../events/keys.ts';
import { ledgerPostings, type PostingCause } from '../ledger/postings.ts';
import { Decimal, isDecimalText } from '../money/decimal.ts';
import { knownValue, reportClass, reportDifferences, type ReportConflict } from '../swap/report.ts';
import { CREATED_STATUS, finalityProblem, statusClassOf } from '../swap/status.ts';
import type { Changes, SwapRow, WorkingSet } from './state.ts';
import { applied, contradicted, noop, rejected, type FoldDecision } from './decision.ts';
import { caseOnException, caseOnVerdict } from './cases.ts';

/**
 * The folds of a swap's own events: creation, status reports (and their contradictions of a final swap),
 * corrections and verdicts. Pure: times come from the event, decisions (status class) were taken at ingest.
 */

const keyOf = (s: { providerId: string; swapId: string }) => swapKey(s.providerId, s.swapId);

function sameMoney(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (isDecimalText(a) && isDecimalText(b)) return new Decimal(a).eq(new Decimal(b));
  return a === b;
}

function touch(ws: WorkingSet, swap: SwapRow, event: SwapEvent): void {
  swap.version += 1;
  swap.lastEventId = event.eventId;
  swap.updatedAt = event.recordedAt;
  ws.swaps.set(keyOf(swap), swap);
  ws.dirty.swaps.add(keyOf(swap));
}

/** Adds the ledger postings of one applied event of a swap (before → after): see src/ledger/postings.ts. */
function post(ws: WorkingSet, event: SwapEvent, kind: PostingCause['kind'], before: SwapRow, after: SwapRow) {
  const key = keyOf(after);
  const existing = ws.postings.get(key) ?? [];
  const rows = ledgerPostings(
    { kind, eventId: event.eventId, recordedAt: event.recordedAt },
    before,
    after,
    existing,
  );
  if (rows.length === 0) return;
  ws.postings.set(key, [...existing, ...rows]);
  ws.newPostings.push(...rows);
}

/** The swap awaits a (new) verdict based on this event; a newer event replaces an older queue entry. */
export function queueForReconciliation(
  ws: WorkingSet,
  event: SwapEvent,
  swap: SwapRow,
  reason: string,
): void {
  const key = keyOf(swap);
  ws.queue.set(key, {
    providerId: swap.providerId,
    swapId: swap.swapId,
    queuedByEventId: event.eventId,
    queuedAt: event.occurredAt,
    reason,
    traceParent: null, // the batch stamps the message's (batch.ts): no header enters the fold
  });
  ws.dirty.queue.add(key);
}

function ownedSwap(ws: WorkingSet, event: SwapEvent): SwapRow | string {
  if (!event.swapId) return `${event.eventType} carries no swapId`;
  const swap = ws.swaps.get(swapKey(event.providerId, event.swapId));
  if (!swap) return `unknown swap ${event.providerId}/${event.swapId}: no SwapCreated was applied for it`;
  return { ...swap };
}

/** Keeps a final swap's contradictions: one row per field, the swap unchanged. */
function recordConflicts(ws: WorkingSet, event: SwapEvent, swap: SwapRow, conflicts: ReportConflict[]) {
  for (const c of conflicts) {
    ws.newConflicts.push({
      conflictId: `${event.eventId}:${c.field}`,
      eventId: event.eventId,
      providerId: swap.providerId,
      swapId: swap.swapId,
      field: c.field,
      finalValue: c.finalValue,
      reportedValue: c.reportedValue,
      source: event.source,
      occurredAt: event.occurredAt,
      recordedAt: event.recordedAt,
    });
  }
  // A contradiction of a final swap is an exception: it opens the swap's case.
  if (conflicts.length > 0) caseOnException(ws, event, swap, describeConflicts(swap, conflicts));
}

const conflictChanges = (conflicts: ReportConflict[]): Changes =>
  Object.fromEntries(conflicts.map((c) => [c.field, [c.finalValue, c.reportedValue]]));

const describeConflicts = (swap: SwapRow, conflicts: ReportConflict[]) =>
  `contradicts final swap (${swap.status}): ` +
  conflicts
    .map((c) => `${c.field} ${c.finalValue ?? 'unknown'} → ${c.reportedValue ?? 'unknown'}`)
    .join(', ');

/**
 * A status report. Not final yet: applies every change (a closed swap reopens or becomes final; entering a
 * closed or final class queues a reconciliation). Final: fills values still unknown (a completion entry and
 * a new reconciliation) and records every contradicted field as a conflict (the swap keeps its value, the
 * reconciliation reopens with a failing check); the report is never rejected whole.
 */
export function foldStatusReported(ws: WorkingSet, event: SwapEventOf<'StatusReported'>): FoldDecision {
  const found = ownedSwap(ws, event);
  if (typeof found === 'string') return rejected(found);
  const swap = found;
  const before = ws.swaps.get(keyOf(swap))!;
  const p = event.payload;
  const d = reportDifferences(swap, p);

  if (d.kind === 'final') {
    if (d.stale)
      return noop(
        `an ${reportClass(p)} status (${p.status}) after the final status ${swap.status}: out of date, ignored`,
      );
    const filled = Object.keys(d.fills).length > 0;
    if (!filled && d.conflicts.length === 0)
      return noop(`swap is final (${swap.status}); nothing new reported`);
    recordConflicts(ws, event, swap, d.conflicts);
    const changes: Changes = {};
    for (const [field, value] of Object.entries(d.fills)) {
      changes[field] = [null, value];
      (swap as Record<string, unknown>)[field] = value;
    }
    queueForReconciliation(ws, event, swap, filled ? 'filled' : 'contradicted');
    if (!filled) return contradicted(conflictChanges(d.conflicts), describeConflicts(swap, d.conflicts));
    touch(ws, swap, event);
    post(ws, event, 'report', before, swap);
    const note = d.conflicts.length > 0 ? `; ${describeConflicts(swap, d.conflicts)}` : '';
    return applied(
      { ...changes, ...conflictChanges(d.conflicts) },
      `fills values of a final swap that were still unknown${note}`,
    );
  }

  const extra = knownValue(p.extraFees);
  if (extra !== null && !sameMoney(swap.extraFees, extra)) d.changes.extraFees = [swap.extraFees, extra];
  // The webhook's networkFees read by evidence (the reconciler reads it); an override wrote it above as the
  // referral or an extra fee. A final report that does not carry it drops the estimate, like the fees.
  const sent = p.networkFeesReading === 'evidence' ? knownValue(p.networkFees) : null;
  const networkFees = sent ?? (d.becomes === 'final' ? null : swap.webhookNetworkFees);
  if (!sameMoney(swap.webhookNetworkFees, networkFees))
    d.changes.webhookNetworkFees = [swap.webhookNetworkFees, networkFees];
  if (Object.keys(d.changes).length === 0)
    return noop(`status ${p.status} and every reported value already known`);
  if (extra !== null) swap.extraFees = extra;
  swap.webhookNetworkFees = networkFees;
  swap.status = p.status;
  swap.providerStatus = p.providerStatus;
  for (const [field, [, after]] of Object.entries(d.changes))
    if (field !== 'status' && field !== 'statusClass' && field !== 'final')
      (swap as Record<string, unknown>)[field] = after;
  const entering = d.becomes !== swap.statusClass;
  swap.statusClass = d.becomes;
  if (d.becomes === 'final') {
    swap.final = true;
    swap.finalAt = event.occurredAt;
  }
  if (d.becomes === 'closed' && entering) swap.closedAt = event.occurredAt;
  // Entering closed or final queues a verdict; so does any change of a closed swap's figures or hashes (a
  // deposit reported on an EXPIRED swap is money moved: it must be judged, not wait for another status).
  if (d.becomes === 'final' && entering) queueForReconciliation(ws, event, swap, 'final');
  if (d.becomes === 'closed') queueForReconciliation(ws, event, swap, entering ? 'closed' : 'closed changed');
  touch(ws, swap, event);
  post(ws, event, 'report', before, swap);
  return applied(d.changes);
}

/**
 * A report the ingest refused because the swap was final (the partner got 405): never applied, only its
 * contradictions recorded. Agreeing with the swap as it now stands, it is a no-op.
 */
export function foldStatusContradicted(
  ws: WorkingSet,
  event: SwapEventOf<'StatusContradicted'>,
): FoldDecision {
  const found = ownedSwap(ws, event);
  if (typeof found === 'string') return rejected(found);
  const swap = found;
  if (!swap.final)
    return rejected(
      `ingest saw the swap final (${event.payload.knownStatus}) but it is ${swap.status}, not final: a report refused with 405 is never applied`,
    );
  const d = reportDifferences(swap, event.payload.report);
  if (d.kind !== 'final' || d.conflicts.length === 0)
    return noop(`the refused report agrees with final swap (${swap.status})`);
  recordConflicts(ws, event, swap, d.conflicts);
  queueForReconciliation(ws, event, swap, 'contradicted');
  return contradicted(conflictChanges(d.conflicts), describeConflicts(swap, d.conflicts));
}

export function foldSwapCreated(ws: WorkingSet, event: SwapEventOf<'SwapCreated'>): FoldDecision {
  if (!event.swapId) return rejected('SwapCreated carries no swapId');
  const key = swapKey(event.providerId, event.swapId);
  const existing = ws.swaps.get(key);
  if (existing)
    return rejected(
      `swap ${event.providerId}/${event.swapId} was already created by event ${existing.lastEventId}`,
    );
  const p = event.payload;
  const r = p.request;
  if (r.tradeMethod !== 'fixed' && r.tradeMethod !== 'float') {
    return rejected(`trade method ${r.tradeMethod} is neither fixed nor float`);
  }
  const swap: SwapRow = {
    providerId: event.providerId,
    swapId: event.swapId,
    requestId: p.requestId,
    tradeMethod: r.tradeMethod,
    quoteRef: r.quoteRef ?? p.quote?.quoteRef ?? null,
    quoteId: r.quoteId ?? p.quote?.quoteId ?? null,
    currencyFrom: r.currencyFrom,
    currencyTo: r.currencyTo,
    payloadCurrencyFrom: r.payloadCurrencyFrom,
    payloadCurrencyTo: r.payloadCurrencyTo,
    amountFrom: r.amountFrom ?? p.quote?.amountFrom ?? null,
    quotedAmountTo: p.quote?.amountTo ?? null,
    slippage: r.slippage ?? p.quote?.defaultSlippage ?? null,
    payinAddress: p.payinAddress,
    payoutAddress: r.payoutAddress,
    payoutExtraId: r.payoutAddressExtraId,
    refundAddress: r.refundAddress,
    refundExtraId: r.refundAddressExtraId,
    nonce: r.nonce,
    createdAt: p.createdAt,
    createdProviderFees: p.providerFees,
    createdReferralFees: p.referralFees,
    createdPayoutNetworkFees: p.payoutNetworkFees,
    signedAmountToProvider: p.signedAmountToProvider,
    signedAmountToWallet: p.signedAmountToWallet,
    signatureValid: p.signatureValid,
    status: CREATED_STATUS,
    providerStatus: null,
    statusClass: 'open',
    closedAt: null,
    final: false,
    finalAt: null,
    amountTo: null,
    providerFees: null,
    referralFees: null,
    payoutNetworkFees: null,
    payinTransactionId: null,
    payoutTransactionId: null,
    refundTransactionId: null,
    extraFees: null,
    webhookNetworkFees: null,
    corrected: false,
    lastCorrectionEventId: null,
    version: 0,
    lastEventId: event.eventId,
    updatedAt: event.recordedAt,
  };
  touch(ws, swap, event);
  return applied({ status: [null, CREATED_STATUS] });
}

/** An operator's audited amendment: the only way a final swap's figures change. */
export function foldSwapCorrected(ws: WorkingSet, event: SwapEventOf<'SwapCorrected'>): FoldDecision {
  const found = ownedSwap(ws, event);
  if (typeof found === 'string') return rejected(found);
  const swap = found;
  const p = event.payload;
  if (p.status !== null || p.final !== null) {
    // Judged on the swap as the correction would leave it: a status alone must agree with its finality too.
    const contradiction = finalityProblem(p.status ?? swap.status, p.final ?? swap.final);
    if (contradiction) return rejected(`the correction contradicts the status classes: ${contradiction}`);
  }
  const changes: Changes = {};
  const wanted: [keyof SwapRow, string | boolean | null][] = [
    ['status', p.status],
    ['final', p.final],
    ['amountTo', p.amount],
    ['providerFees', p.providerFees],
    ['referralFees', p.referralFees],
    ['payoutNetworkFees', p.payoutNetworkFees],
  ];
  for (const [field, after] of wanted) {
    if (after === null) continue;
    const before = swap[field];
    const same =
      typeof after === 'string' && field !== 'status'
        ? sameMoney(before as string | null, after)
        : before === after;
    if (!same) changes[field] = [before, after];
  }
  if (Object.keys(changes).length === 0) return noop('the correction matches the current state');
  for (const [field, [, after]] of Object.entries(changes)) (swap as Record<string, unknown>)[field] = after;
  if (changes.final) swap.finalAt = swap.final ? event.occurredAt : null;
  if (changes.final || changes.status) {
    // Finality is the operator's word; otherwise the status decides: EXPIRED is closed, the rest open.
    const cls = swap.final ? 'final' : statusClassOf(swap.status, new Set());
    if (cls === 'closed' && swap.statusClass !== 'closed') swap.closedAt = event.occurredAt;
    swap.statusClass = cls;
  }
  swap.corrected = true;
  swap.lastCorrectionEventId = event.eventId;
  if (swap.final) queueForReconciliation(ws, event, swap, 'corrected');
  const before = ws.swaps.get(keyOf(swap))!;
  touch(ws, swap, event);
  post(ws, event, 'correction', before, swap);
  return applied(changes, `corrected by ${p.operator}: ${p.reason}`);
}

/**
 * A verdict: every one goes to the history; the current one per swap is the one based on the newest event
 * (its log offset). A verdict based on an older event than the current one's, folded later (two reconcilers,
 * two lanes), goes to the history only.
 */
export function foldSwapReconciled(ws: WorkingSet, event: SwapEventOf<'SwapReconciled'>): FoldDecision {
  const found = ownedSwap(ws, event);
  if (typeof found === 'string') return rejected(found);
  const swap = found;
  const key = keyOf(swap);
  const p: PayloadByType['SwapReconciled'] = event.payload;
  const before = ws.reconciliations.get(key);
  const basedOnOffset = ws.offsets.get(p.basedOnEventId) ?? null;
  const row = {
    providerId: swap.providerId,
    swapId: swap.swapId,
    eventId: event.eventId,
    basedOnEventId: p.basedOnEventId,
    basedOnOffset,
    verdict: p.verdict,
    checks: p.checks,
    reconciledAt: event.occurredAt,
  };
  ws.newVerdicts.push({
    eventId: row.eventId,
    providerId: row.providerId,
    swapId: row.swapId,
    basedOnEventId: row.basedOnEventId,
    verdict: row.verdict,
    checks: row.checks,
    reconciledAt: row.reconciledAt,
  });
  // The queue entry is done only if no newer event queued the swap meanwhile.
  if (ws.queue.get(key)?.queuedByEventId === p.basedOnEventId) {
    ws.queue.set(key, undefined);
    ws.dirty.queue.add(key);
  }
  const older =
    before?.basedOnOffset != null && basedOnOffset !== null && basedOnOffset < before.basedOnOffset;
  if (older)
    return applied(
      {},
      `based on an older event (offset ${basedOnOffset}) than the current verdict's (offset ${before.basedOnOffset}): history only`,
    );
  ws.reconciliations.set(key, row);
  ws.dirty.reconciliations.add(key);
  const caseStep = caseOnVerdict(ws, event, swap);
  return applied(
    { verdict: [before?.verdict ?? null, p.verdict] },
    caseStep ? `case ${caseStep}` : undefined,
  );
}
