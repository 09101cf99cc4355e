import { Decimal, formatDecimal, parseDecimal } from '../money/decimal.ts';
import type { InvoiceIssued, InvoiceLine } from '../events/types.ts';

/**
 * The referral invoice of a partner's month (issue 43 item 2), pure: built from the finance views' figures
 * (the month's referral_fees_receivable per swap final in it) and the month's disputes. A line in dispute
 * (its statement line differs, or its swap has an unresolved case) is listed apart with why, and left out
 * of the totals. The number is deterministic: `<provider>-<YYYY-MM>`, then `-r2`, `-r3` for reissues.
 */

/** One swap's referral fee receivable in one currency (finance.postings, net of reversals). */
export interface Receivable {
  swapId: string;
  currency: string;
  amount: string;
}

export class InvoiceRefusedError extends Error {
  override name = 'InvoiceRefusedError';
}

export interface InvoiceInput {
  providerId: string;
  period: string;
  operator: string;
  issuedAt: Date;
  dueDays: number;
  receivables: readonly Receivable[];
  /** Why each swap is in dispute, by swap id. */
  disputes: ReadonlyMap<string, readonly string[]>;
  /** The invoices already issued for the provider and month, oldest first. */
  issued: readonly string[];
  reissue: { reason: string } | undefined;
}

export const invoiceNumber = (providerId: string, period: string, earlier: number) =>
  earlier === 0 ? `${providerId}-${period}` : `${providerId}-${period}-r${earlier + 1}`;

const day = (d: Date) => d.toISOString().slice(0, 10);

export function buildInvoice(input: InvoiceInput): InvoiceIssued {
  const inForce = input.issued.at(-1);
  if (inForce !== undefined && !input.reissue)
    throw new InvoiceRefusedError(
      `invoice ${inForce} is already issued for ${input.providerId} ${input.period}: reissue it with --reissue --reason <why>`,
    );
  if (!Number.isInteger(input.dueDays) || input.dueDays < 0 || input.dueDays > 365)
    throw new InvoiceRefusedError('--due-days must be whole days, 0-365');
  const lines: InvoiceLine[] = [];
  const totals = new Map<string, Decimal>();
  const sorted = [...input.receivables].sort(
    (a, b) =>
      (a.swapId < b.swapId ? -1 : a.swapId > b.swapId ? 1 : 0) ||
      (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0),
  );
  for (const r of sorted) {
    const amount = parseDecimal(r.amount);
    if (amount.isZero()) continue; // booked and reversed within the month: nothing receivable
    const why = input.disputes.get(r.swapId);
    const disputed = why && why.length > 0 ? why.join('; ') : null;
    lines.push({ swapId: r.swapId, currency: r.currency, referralFee: formatDecimal(amount), disputed });
    if (disputed === null) totals.set(r.currency, (totals.get(r.currency) ?? new Decimal(0)).plus(amount));
  }
  const due = new Date(input.issuedAt.getTime());
  due.setUTCDate(due.getUTCDate() + input.dueDays);
  return {
    invoiceNumber: invoiceNumber(input.providerId, input.period, input.issued.length),
    period: input.period,
    operator: input.operator,
    issuedAt: input.issuedAt.toISOString(),
    dueDate: day(due),
    reason: input.reissue?.reason ?? null,
    supersedes: inForce ?? null,
    lines,
    totals: [...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, amount]) => ({ currency, amount: formatDecimal(amount) })),
  };
}

/** An invoiced line still owed: its swap's fee and what earlier settlements already set against it. */
export interface OwedLine {
  swapId: string;
  swapVersion: number;
  fee: string;
  settled: string;
}

/**
 * A payment split across the invoice's lines in line order, each up to what it still owes: a partial payment
 * leaves the rest outstanding; one over the outstanding total is refused, naming it.
 */
export function allocatePayment(
  invoiceNumber: string,
  currency: string,
  amount: Decimal,
  lines: readonly OwedLine[],
): { swapId: string; swapVersion: number; amount: string }[] {
  let left = amount;
  const allocations: { swapId: string; swapVersion: number; amount: string }[] = [];
  for (const l of lines) {
    const open = new Decimal(l.fee).minus(l.settled);
    if (left.isZero() || !open.isPositive() || open.isZero()) continue;
    const part = Decimal.min(open, left);
    allocations.push({ swapId: l.swapId, swapVersion: l.swapVersion, amount: formatDecimal(part) });
    left = left.minus(part);
  }
  if (!left.isZero())
    throw new InvoiceRefusedError(
      `--amount ${formatDecimal(amount)} ${currency} is more than invoice ${invoiceNumber} has outstanding (${formatDecimal(amount.minus(left))} ${currency})`,
    );
  return allocations;
}
