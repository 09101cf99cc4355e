import type { SwapEventOf } from '../events/types.ts';
import { isDecimalText } from '../money/decimal.ts';
import { isPeriod } from '../ledger/periods.ts';
import { applied, rejected, type FoldDecision } from './decision.ts';
import { settlementPostings } from '../ledger/postings.ts';
import { swapKey } from '../events/keys.ts';
import type { WorkingSet } from './state.ts';

/**
 * The month end's events, folded: statements with their lines and the match decided at import, and the
 * closes and reopenings of periods. Append-only rows, no read of other rows: a statement's match and a
 * close's digest were decided by the operator's command (src/ops/statements.ts, src/ops/periods.ts) and
 * travel in the event, so a replay rebuilds them whatever partition folds first.
 */

const OUTCOMES = new Set(['matched', 'statement_only', 'ledger_only', 'status_differs', 'amount_differs']);
const AMOUNTS = ['amountFrom', 'amountTo', 'providerFee', 'referralFee', 'payoutNetworkFee'] as const;
const bounds = (problem: string) => rejected(`refused by the fold's input bounds: ${problem}`);

export function foldStatementImported(ws: WorkingSet, e: SwapEventOf<'StatementImported'>): FoldDecision {
  const p = e.payload;
  if (!isPeriod(p.period)) return bounds(`period "${p.period.slice(0, 20)}" is not YYYY-MM`);
  for (const [i, l] of p.lines.entries()) {
    if (!OUTCOMES.has(l.outcome)) return bounds(`line ${i + 1}: outcome "${l.outcome.slice(0, 30)}"`);
    for (const f of AMOUNTS) {
      const v = l[f];
      if (v !== null && (!isDecimalText(v) || v.startsWith('-')))
        return bounds(`line ${i + 1}: ${f} is not an amount`);
    }
    if (l.finishedAt !== null && Number.isNaN(Date.parse(l.finishedAt)))
      return bounds(`line ${i + 1}: finishedAt`);
  }
  ws.newStatements.push({
    statementId: e.eventId,
    providerId: e.providerId,
    period: p.period,
    fileName: p.fileName,
    fileDigest: p.fileDigest,
    layout: p.layout,
    operator: p.operator,
    reason: p.reason,
    supersedes: p.supersedes,
    lineCount: p.lines.length,
    importedAt: e.recordedAt,
  });
  for (const [i, l] of p.lines.entries())
    ws.newStatementLines.push({
      statementId: e.eventId,
      seq: i + 1,
      providerId: e.providerId,
      lineNo: l.lineNo,
      swapId: l.swapId,
      outcome: l.outcome,
      statusWord: l.statusWord,
      status: l.status,
      finishedAt: l.finishedAt,
      currencyFrom: l.currencyFrom,
      amountFrom: l.amountFrom,
      currencyTo: l.currencyTo,
      amountTo: l.amountTo,
      providerFee: l.providerFee,
      referralFee: l.referralFee,
      payoutNetworkFee: l.payoutNetworkFee,
      ledgerStatus: l.ledgerStatus,
      priorPeriod: l.priorPeriod,
      differences: l.differences,
    });
  return applied(
    { statement: [null, `${e.providerId} ${p.period}: ${p.lines.length} line(s)`] },
    p.supersedes ? `supersedes statement ${p.supersedes}` : undefined,
  );
}

export function foldPeriodEvent(
  ws: WorkingSet,
  e: SwapEventOf<'PeriodClosed'> | SwapEventOf<'PeriodReopened'>,
): FoldDecision {
  const p = e.payload;
  if (!isPeriod(p.period)) return bounds(`period "${p.period.slice(0, 20)}" is not YYYY-MM`);
  const closed =
    e.eventType === 'PeriodClosed' ? (e.payload as SwapEventOf<'PeriodClosed'>['payload']) : undefined;
  ws.newPeriodEvents.push({
    eventId: e.eventId,
    period: p.period,
    kind: closed ? 'closed' : 'reopened',
    operator: p.operator,
    reason: p.reason,
    digest: p.digest,
    previousDigest: closed ? closed.previousDigest : null,
    postingCount: closed ? closed.postingCount : null,
    statementIds: closed ? closed.statementIds : null,
    acceptedDifferences: closed ? closed.acceptedDifferences : false,
    recordedAt: e.recordedAt,
  });
  return applied({ period: [p.period, closed ? `closed ${p.digest}` : `reopened`] });
}

/** A referral invoice as issued (src/ops/invoices.ts built it from the finance views): its row and lines. */
export function foldInvoiceIssued(ws: WorkingSet, e: SwapEventOf<'InvoiceIssued'>): FoldDecision {
  const p = e.payload;
  if (!isPeriod(p.period)) return bounds(`period "${p.period.slice(0, 20)}" is not YYYY-MM`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(p.dueDate)) return bounds('dueDate is not YYYY-MM-DD');
  if (Number.isNaN(Date.parse(p.issuedAt))) return bounds('issuedAt');
  for (const [i, l] of p.lines.entries())
    if (!isDecimalText(l.referralFee)) return bounds(`line ${i + 1}: referralFee is not an amount`);
  for (const t of p.totals)
    if (!isDecimalText(t.amount)) return bounds(`total ${t.currency.slice(0, 20)} is not an amount`);
  ws.newInvoices.push({
    invoiceNumber: p.invoiceNumber,
    eventId: e.eventId,
    providerId: e.providerId,
    period: p.period,
    operator: p.operator,
    issuedAt: p.issuedAt,
    dueDate: p.dueDate,
    reason: p.reason,
    supersedes: p.supersedes,
    totals: p.totals,
  });
  for (const [i, l] of p.lines.entries())
    ws.newInvoiceLines.push({
      eventId: e.eventId,
      invoiceNumber: p.invoiceNumber,
      seq: i + 1,
      providerId: e.providerId,
      swapId: l.swapId,
      currency: l.currency,
      referralFee: l.referralFee,
      disputed: l.disputed,
    });
  return applied(
    { invoice: [null, `${p.invoiceNumber}: ${p.lines.length} line(s)`] },
    p.supersedes ? `supersedes invoice ${p.supersedes}` : undefined,
  );
}

/**
 * An invoice's payment, split across its lines when recorded (src/ops/invoice-settle.ts): one balanced
 * settlement entry, crediting each line's referral_fees_receivable.
 */
export function foldInvoiceSettled(ws: WorkingSet, e: SwapEventOf<'InvoiceSettled'>): FoldDecision {
  const p = e.payload;
  if (p.method !== 'bank' && p.method !== 'chain') return bounds(`method "${p.method.slice(0, 20)}"`);
  if (p.allocations.length === 0) return bounds('no allocation');
  for (const [i, a] of p.allocations.entries())
    if (!isDecimalText(a.amount) || a.amount.startsWith('-') || /^0(\.0*)?$/.test(a.amount))
      return bounds(`allocation ${i + 1}: amount is not a positive amount`);
  const rows = settlementPostings(e, p.currency, p.allocations);
  for (const r of rows) {
    const key = swapKey(e.providerId, r.swapId);
    const held = ws.postings.get(key);
    if (held) held.push(r);
  }
  ws.newPostings.push(...rows);
  return applied(
    { settlement: [null, `${p.invoiceNumber}: ${p.amount} ${p.currency} (${p.method} ${p.reference})`] },
    `${p.allocations.length} line(s) by ${p.operator}`,
  );
}
