import type { StatusReported } from '../events/types.ts';
import type { MappedStatus } from '../ingest/status-mapping.ts';
import { Decimal, isDecimalText } from '../money/decimal.ts';
import type { SwapStatus } from '../partner/types.ts';

/**
 * Change detection of the poller, pure: a poll result is appended only when the projector would change
 * something with it. The rules mirror the fold's (src/projector/fold.ts): a value is unknown when
 * empty or absent, money compares as decimals, a new status, a newly known or different value, or
 * finality is a change. A swap the projector has not folded yet (only the gateway's created_swaps
 * knows it) counts as CREATED with nothing known, so any report changes it.
 */

/** A swap of the polling set as the projection shows it (`version` null: not projected yet). */
export interface PolledSwap {
  readonly swapId: string;
  readonly providerId: string;
  readonly status: string;
  readonly final: boolean;
  readonly version: number | null;
  readonly amountTo: string | null;
  readonly providerFees: string | null;
  readonly referralFees: string | null;
  readonly payoutNetworkFees: string | null;
  readonly payinTransactionId: string | null;
  readonly payoutTransactionId: string | null;
}

const MONEY = ['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees'] as const;
const HASHES = ['payinTransactionId', 'payoutTransactionId'] as const;
type Field = (typeof MONEY)[number] | (typeof HASHES)[number];

function known(v: string | null | undefined): string | null {
  return v === null || v === undefined || v.trim() === '' ? null : v;
}

function same(field: Field, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if ((MONEY as readonly string[]).includes(field) && isDecimalText(a) && isDecimalText(b))
    return new Decimal(a).eq(new Decimal(b));
  return a === b;
}

/** The StatusReported payload of a poll: the mapped status decided here, values as the partner sent them. */
export function pollReport(mapped: MappedStatus, s: SwapStatus): StatusReported {
  return {
    providerStatus: mapped.providerStatus,
    status: mapped.status,
    final: mapped.final,
    amount: s.amount ?? null,
    providerFees: s.providerFees,
    referralFees: s.referralFees,
    payoutNetworkFees: s.payoutNetworkFees,
    payinTransactionId: s.payinTransactionId ?? null,
    payoutTransactionId: s.payoutTransactionId ?? null,
    quoteId: s.quoteId ?? null,
  };
}

function reported(r: StatusReported): Record<Field, string | null> {
  return {
    amountTo: known(r.amount),
    providerFees: known(r.providerFees),
    referralFees: known(r.referralFees),
    payoutNetworkFees: known(r.payoutNetworkFees),
    payinTransactionId: known(r.payinTransactionId),
    payoutTransactionId: known(r.payoutTransactionId),
  };
}

/**
 * What the report would change on the swap: `status`, `final` and value names. For a final swap only
 * values still unknown count as changes (the fold fills them), plus a different status or value, which
 * the fold rejects but the journal keeps (the partner contradicts a final state: worth recording).
 */
export function changesOf(swap: PolledSwap, report: StatusReported): string[] {
  const out: string[] = [];
  if (report.status !== swap.status) out.push('status');
  const values = reported(report);
  for (const field of [...MONEY, ...HASHES]) {
    const after = values[field];
    if (after !== null && !same(field, swap[field], after)) out.push(field);
  }
  if (report.final && !swap.final) out.push('final');
  return out;
}

/** A text that is equal for two reports that would change the same things the same way. */
export function reportFingerprint(r: StatusReported): string {
  const v = reported(r);
  return JSON.stringify([r.status, r.final, ...[...MONEY, ...HASHES].map((f) => v[f])]);
}
