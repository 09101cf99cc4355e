import type pg from 'pg';
import { newEvent } from '../events/keys.ts';
import type { SwapEventOf } from '../events/types.ts';
import { Decimal, formatDecimal, isDecimalText } from '../money/decimal.ts';
import { allocatePayment, InvoiceRefusedError } from '../monthend/invoice.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { invoiceKey } from './invoices.ts';
import { OperatorInputError } from './operator-events.ts';

/**
 * `invoice settle`: a partner's payment of an invoice in force, split across its invoiced lines of the
 * payment's currency in line order, each up to what is still receivable on it (earlier settlements of the
 * swap counted). A partial payment leaves the rest outstanding; an overpayment, a currency not on the
 * invoice, a superseded invoice are refused. Builds the InvoiceSettled event; appends nothing.
 */

export interface SettleInput {
  invoiceNumber: string;
  amount: string | undefined;
  currency: string | undefined;
  method: 'bank' | 'chain';
  reference: string | undefined;
  by: string | undefined;
  /** chain: the chain's word on the transaction in `reference` (src/ops/chain-payment.ts). */
  verified?: string;
}

export async function invoiceSettleEvent(
  pool: pg.Pool | pg.ClientBase,
  input: SettleInput,
  now = new Date(),
): Promise<SwapEventOf<'InvoiceSettled'>> {
  const operator = input.by?.trim();
  if (!operator) throw new OperatorInputError('--by is required');
  const reference = input.reference?.trim();
  if (!reference)
    throw new OperatorInputError(
      input.method === 'bank' ? '--bank-reference is required' : '--tx is required',
    );
  for (const [flag, v] of [
    ['--by', operator],
    [input.method === 'bank' ? '--bank-reference' : '--tx', reference],
  ] as const) {
    const problem = partnerTextProblem(v, 200);
    if (problem) throw new OperatorInputError(`${flag} ${problem}`);
  }
  const currency = input.currency?.trim();
  if (!currency) throw new OperatorInputError('--currency is required');
  if (!isDecimalText(input.amount) || input.amount.startsWith('-') || new Decimal(input.amount).isZero())
    throw new OperatorInputError(
      `--amount must be a positive decimal, got "${String(input.amount).slice(0, 40)}"`,
    );
  const amount = new Decimal(input.amount);
  const inv = (
    await pool.query<{ provider_id: string; period: string; event_id: string; superseded_by: string | null }>(
      `select i.provider_id, i.period, i.event_id,
              (select n.invoice_number from invoices n where n.supersedes = i.invoice_number limit 1) as superseded_by
         from invoices i where i.invoice_number = $1 order by i.event_id desc limit 1`,
      [input.invoiceNumber],
    )
  ).rows[0];
  if (!inv) throw new OperatorInputError(`no invoice ${input.invoiceNumber.slice(0, 80)}`);
  if (inv.superseded_by)
    throw new OperatorInputError(
      `invoice ${input.invoiceNumber} is superseded by ${inv.superseded_by}: settle that one`,
    );
  const lines = await pool.query<{ swap_id: string; fee: string; settled: string; version: number }>(
    `select l.swap_id, l.referral_fee::text as fee, s.version,
            coalesce((select -sum(p.amount) from ledger_postings p
                       where p.provider_id = l.provider_id and p.swap_id = l.swap_id and p.currency = l.currency
                         and p.entry_kind = 'settlement' and p.account = 'referral_fees_receivable'), 0)::text as settled
       from invoice_lines l join swaps s on s.provider_id = l.provider_id and s.swap_id = l.swap_id
      where l.event_id = $1 and l.currency = $2 and l.disputed is null
      order by l.seq`,
    [inv.event_id, currency],
  );
  if (lines.rows.length === 0)
    throw new OperatorInputError(
      `--currency ${currency.slice(0, 20)} is not on invoice ${input.invoiceNumber}`,
    );
  let allocations;
  try {
    allocations = allocatePayment(
      input.invoiceNumber,
      currency,
      amount,
      lines.rows.map((l) => ({ swapId: l.swap_id, swapVersion: l.version, fee: l.fee, settled: l.settled })),
    );
  } catch (e) {
    if (e instanceof InvoiceRefusedError) throw new OperatorInputError(e.message);
    throw e;
  }
  return newEvent(
    'InvoiceSettled',
    now,
    {
      invoiceNumber: input.invoiceNumber,
      method: input.method,
      reference,
      amount: formatDecimal(amount),
      currency,
      operator,
      allocations,
      verified: input.verified ?? null,
    },
    { providerId: inv.provider_id, source: 'ops', aggregateKey: invoiceKey(inv.provider_id, inv.period) },
  );
}
