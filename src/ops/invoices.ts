import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';
import { newEvent } from '../events/keys.ts';
import type { InvoiceLine, SwapEventOf } from '../events/types.ts';
import { FINANCE_SCHEMA } from '../ledger/finance-views.ts';
import { isPeriod } from '../ledger/periods.ts';
import { buildInvoice, InvoiceRefusedError, type Receivable } from '../monthend/invoice.ts';
import type { InvoiceDocument } from '../monthend/invoice-render.ts';
import { partnerTextProblem } from '../swap/text.ts';
import { statementInForceSql } from './statements.ts';
import { OperatorInputError } from './operator-events.ts';

/**
 * `invoice issue` and `invoice show`: the referral invoice's figures read from the finance views, its
 * disputes from the month's statement in force and the swaps' open cases, built by src/monthend/invoice.ts
 * into an InvoiceIssued event. Nothing is stored here: the caller appends the event.
 */

/** The aggregate key of a provider's invoices of a month: one partition, in issue order. */
export const invoiceKey = (providerId: string, period: string) => `invoice:${providerId}:${period}`;

/** The month's referral fees receivable per swap final in it, net of reversals (finance.postings). */
export async function monthReceivables(
  pool: pg.Pool | pg.ClientBase,
  providerId: string,
  period: string,
  finance = FINANCE_SCHEMA,
): Promise<Receivable[]> {
  assertIdentifier(finance);
  const r = await pool.query<{ swap_id: string; currency: string; amount: string }>(
    `select p.swap_id, p.currency, sum(p.amount)::text as amount
       from ${finance}.postings p
       join ${finance}.swaps s on s.provider_id = p.provider_id and s.swap_id = p.swap_id
      where p.provider_id = $1 and p.account = 'referral_fees_receivable' and s.final
        and to_char(s.final_at at time zone 'UTC', 'YYYY-MM') = $2
      group by p.swap_id, p.currency`,
    [providerId, period],
  );
  return r.rows.map((x) => ({ swapId: x.swap_id, currency: x.currency, amount: x.amount }));
}

/** Why each swap of the provider is in dispute: its line of the month's statement in force, its open case. */
export async function monthDisputes(
  pool: pg.Pool | pg.ClientBase,
  providerId: string,
  period: string,
): Promise<Map<string, string[]>> {
  const disputes = new Map<string, string[]>();
  const add = (swapId: string, why: string) => disputes.set(swapId, [...(disputes.get(swapId) ?? []), why]);
  const lines = await pool.query<{ swap_id: string; outcome: string; fields: string | null }>(
    `select l.swap_id, l.outcome,
            (select string_agg(d->>'field', ', ') from jsonb_array_elements(l.differences) d
              where d->>'verdict' <> 'within_tolerance') as fields
       from statement_lines l join statements s on s.statement_id = l.statement_id
      where s.provider_id = $1 and s.period = $2 and ${statementInForceSql('s')} and l.outcome <> 'matched'
      order by l.seq`,
    [providerId, period],
  );
  for (const l of lines.rows) add(l.swap_id, `statement: ${l.outcome}${l.fields ? ` (${l.fields})` : ''}`);
  const cases = await pool.query<{ swap_id: string; state: string }>(
    `select swap_id, state from cases where provider_id = $1 and state <> 'resolved' order by swap_id`,
    [providerId],
  );
  for (const c of cases.rows) add(c.swap_id, `case ${c.state}`);
  return disputes;
}

export interface InvoiceIssueInput {
  providerId: string;
  period: string;
  by: string | undefined;
  dueDays: number;
  reissue: boolean;
  reason: string | undefined;
  finance?: string;
}

/** The InvoiceIssued event of a partner's month, or an OperatorInputError naming why not. Appends nothing. */
export async function invoiceIssueEvent(
  pool: pg.Pool,
  input: InvoiceIssueInput,
  now = new Date(),
): Promise<SwapEventOf<'InvoiceIssued'>> {
  if (!isPeriod(input.period))
    throw new OperatorInputError(`the month must be YYYY-MM, got "${input.period.slice(0, 20)}"`);
  const operator = input.by?.trim();
  if (!operator) throw new OperatorInputError('--by is required');
  const reason = input.reason?.trim();
  if (input.reissue && !reason) throw new OperatorInputError('--reissue needs --reason <why>');
  for (const [flag, v] of [
    ['--by', operator],
    ['--reason', reason],
  ] as const) {
    const problem = v === undefined ? undefined : partnerTextProblem(v, 2000);
    if (problem) throw new OperatorInputError(`${flag} ${problem}`);
  }
  const issued = await pool.query<{ invoice_number: string }>(
    `select invoice_number from invoices where provider_id = $1 and period = $2 order by event_id`,
    [input.providerId, input.period],
  );
  let payload;
  try {
    payload = buildInvoice({
      providerId: input.providerId,
      period: input.period,
      operator,
      issuedAt: now,
      dueDays: input.dueDays,
      receivables: await monthReceivables(pool, input.providerId, input.period, input.finance),
      disputes: await monthDisputes(pool, input.providerId, input.period),
      issued: issued.rows.map((r) => r.invoice_number),
      reissue: input.reissue ? { reason: reason! } : undefined,
    });
  } catch (e) {
    if (e instanceof InvoiceRefusedError) throw new OperatorInputError(e.message);
    throw e;
  }
  return newEvent('InvoiceIssued', now, payload, {
    providerId: input.providerId,
    source: 'ops',
    aggregateKey: invoiceKey(input.providerId, input.period),
  });
}

/** An issued invoice by its number, as folded (the latest, should two issues have raced for it). */
export async function invoiceByNumber(
  pool: pg.Pool | pg.ClientBase,
  invoiceNumber: string,
): Promise<InvoiceDocument | undefined> {
  const r = await pool.query<{
    event_id: string;
    provider_id: string;
    period: string;
    operator: string;
    issued_at: string;
    due_date: string;
    reason: string | null;
    supersedes: string | null;
    totals: { currency: string; amount: string }[];
  }>(
    `select event_id, provider_id, period, operator,
            to_char(issued_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as issued_at,
            due_date, reason, supersedes, totals
       from invoices where invoice_number = $1 order by event_id desc limit 1`,
    [invoiceNumber],
  );
  const inv = r.rows[0];
  if (!inv) return undefined;
  const lines = await pool.query<{
    swap_id: string;
    currency: string;
    referral_fee: string;
    disputed: string | null;
  }>(
    `select swap_id, currency, referral_fee::text, disputed from invoice_lines where event_id = $1 order by seq`,
    [inv.event_id],
  );
  return {
    invoiceNumber,
    providerId: inv.provider_id,
    period: inv.period,
    operator: inv.operator,
    issuedAt: inv.issued_at,
    dueDate: inv.due_date,
    reason: inv.reason,
    supersedes: inv.supersedes,
    totals: inv.totals,
    lines: lines.rows.map((l): InvoiceLine => ({
      swapId: l.swap_id,
      currency: l.currency,
      referralFee: l.referral_fee,
      disputed: l.disputed,
    })),
  };
}
