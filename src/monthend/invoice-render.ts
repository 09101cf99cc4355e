import { csvDocument, type CsvCell } from '../ledger/csv.ts';
import type { InvoiceIssued } from '../events/types.ts';

/**
 * A referral invoice as finance hands it over: CSV (the finance exports' writer, formula-neutralised) and a
 * printable, self-contained HTML page (no scripts, no external resources, every value escaped). Pure.
 */

export interface InvoiceDocument extends InvoiceIssued {
  providerId: string;
}

export function invoiceCsv(inv: InvoiceDocument): string {
  const rows: CsvCell[][] = [
    ['invoice', inv.invoiceNumber],
    ['provider', inv.providerId],
    ['period', inv.period],
    ['issued_at', inv.issuedAt],
    ['issued_by', inv.operator],
    ['due_date', inv.dueDate],
    ['supersedes', inv.supersedes],
    [],
    ['swap_id', 'currency', 'referral_fee'],
    ...inv.lines.filter((l) => l.disputed === null).map((l) => [l.swapId, l.currency, l.referralFee]),
    [],
    ['total_currency', 'total'],
    ...inv.totals.map((t) => [t.currency, t.amount]),
    [],
    ['disputed_swap_id', 'currency', 'referral_fee', 'why'],
    ...inv.lines
      .filter((l) => l.disputed !== null)
      .map((l) => [l.swapId, l.currency, l.referralFee, l.disputed]),
  ];
  return csvDocument(rows);
}

// The console's escapeHtml sits on a floor above monthend (src/console/html.ts); the same five characters.
const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const td = (cells: readonly (string | null)[]) =>
  `<tr>${cells.map((c) => `<td>${esc(c ?? '')}</td>`).join('')}</tr>`;

export function invoiceHtml(inv: InvoiceDocument): string {
  const invoiced = inv.lines.filter((l) => l.disputed === null);
  const disputed = inv.lines.filter((l) => l.disputed !== null);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice ${esc(inv.invoiceNumber)}</title>
<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #999;padding:2px 8px}td:nth-child(3){text-align:right}@media print{body{margin:0}}</style>
</head><body>
<h1>Referral invoice ${esc(inv.invoiceNumber)}</h1>
<p>Partner: ${esc(inv.providerId)}<br>Month: ${esc(inv.period)}<br>Issued: ${esc(inv.issuedAt)} by ${esc(inv.operator)}<br>Due: ${esc(inv.dueDate)}${inv.supersedes ? `<br>Supersedes: ${esc(inv.supersedes)}` : ''}</p>
<h2>Swaps</h2>
<table><thead><tr><th>Swap</th><th>Currency</th><th>Referral fee</th></tr></thead><tbody>
${invoiced.map((l) => td([l.swapId, l.currency, l.referralFee])).join('\n')}
</tbody></table>
<h2>Totals</h2>
<table><thead><tr><th>Currency</th><th>Total</th></tr></thead><tbody>
${inv.totals.map((t) => td([t.currency, t.amount])).join('\n')}
</tbody></table>
<h2>In dispute (not invoiced)</h2>
<table><thead><tr><th>Swap</th><th>Currency</th><th>Referral fee</th><th>Why</th></tr></thead><tbody>
${disputed.map((l) => td([l.swapId, l.currency, l.referralFee, l.disputed])).join('\n')}
</tbody></table>
</body></html>
`;
}
