import type { StatusReported } from '../events/types.ts';
import { Decimal, isDecimalText } from '../money/decimal.ts';
import { STATUS_CLASSES, type MappedStatus, type StatusClass } from './status.ts';

/**
 * What a partner's status report changes on a swap: the one rule, used by the fold (which applies it) and
 * by the poller (which appends a poll result only when it changes something). A value is unknown when
 * empty or absent ("as soon as known" fields); money compares as decimals.
 */

export const REPORT_MONEY = ['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees'] as const;
export const REPORT_HASHES = ['payinTransactionId', 'payoutTransactionId', 'refundTransactionId'] as const;
export const REPORT_FIELDS = [...REPORT_MONEY, ...REPORT_HASHES] as const;
export type ReportField = (typeof REPORT_FIELDS)[number];
export type ReportValues = Record<ReportField, string | null>;

/** The swap as far as a report is concerned. */
export interface ReportedSwap extends ReportValues {
  readonly status: string;
  readonly statusClass: string;
  readonly final: boolean;
}

/** Empty, blank or absent is "not known yet". */
export function knownValue(value: string | null | undefined): string | null {
  return value === null || value === undefined || value.trim() === '' ? null : value;
}

export function reportValues(p: StatusReported): ReportValues {
  return {
    amountTo: knownValue(p.amount),
    providerFees: knownValue(p.providerFees),
    referralFees: knownValue(p.referralFees),
    payoutNetworkFees: knownValue(p.payoutNetworkFees),
    payinTransactionId: knownValue(p.payinTransactionId),
    payoutTransactionId: knownValue(p.payoutTransactionId),
    refundTransactionId: knownValue(p.refundTransactionId),
  };
}

/** The report's fields as the swaps table names its columns. */
export interface ReportColumns {
  amount_to: string | null;
  provider_fees: string | null;
  referral_fees: string | null;
  payout_network_fees: string | null;
  payin_transaction_id: string | null;
  payout_transaction_id: string | null;
  refund_transaction_id: string | null;
}

/** A swaps row's report fields (webhook lookup, polling set, reconciler): the one column-to-field map. */
export function reportValuesOfRow(row: ReportColumns): ReportValues {
  return {
    amountTo: row.amount_to,
    providerFees: row.provider_fees,
    referralFees: row.referral_fees,
    payoutNetworkFees: row.payout_network_fees,
    payinTransactionId: row.payin_transaction_id,
    payoutTransactionId: row.payout_transaction_id,
    refundTransactionId: row.refund_transaction_id,
  };
}

/** The class the ingest decided; events from before classes existed carry only `final`. */
export function reportClass(p: Pick<StatusReported, 'statusClass' | 'final'>): StatusClass {
  return STATUS_CLASSES.find((c) => c === p.statusClass) ?? (p.final ? 'final' : 'open');
}

export function sameValue(field: ReportField, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if ((REPORT_MONEY as readonly string[]).includes(field) && isDecimalText(a) && isDecimalText(b))
    return new Decimal(a).eq(new Decimal(b));
  return a === b;
}

/** A report that contradicts a final swap on one field: the swap keeps `finalValue`. */
export interface ReportConflict {
  readonly field: 'status' | ReportField;
  readonly finalValue: string | null;
  readonly reportedValue: string | null;
}

export type ReportDifferences =
  /** The swap is not final: everything the report changes, [before, after], status and class included. */
  | { kind: 'open'; changes: Record<string, [unknown, unknown]>; becomes: StatusClass }
  /**
   * The swap is final: values still unknown that the report fills, and the fields it contradicts. `stale`:
   * the report names an open or closed status (PENDING or EXPIRED after FINISHED): an earlier state delivered
   * late, not another outcome; it fills and contradicts nothing (its figures are estimates).
   */
  | {
      kind: 'final';
      fills: Partial<Record<ReportField, string>>;
      conflicts: ReportConflict[];
      stale: boolean;
    };

export function reportDifferences(swap: ReportedSwap, report: StatusReported): ReportDifferences {
  const values = reportValues(report);
  // An open or closed status after a final one (PENDING or EXPIRED after FINISHED) is a reordered
  // notification, not another outcome.
  if (swap.final && reportClass(report) !== 'final')
    return { kind: 'final', fills: {}, conflicts: [], stale: true };
  if (swap.final) {
    const fills: Partial<Record<ReportField, string>> = {};
    const conflicts: ReportConflict[] = [];
    // A report of another outcome (REFUNDED for a FINISHED swap) fills nothing: its figures are not this
    // outcome's; they are kept only where they contradict a known one.
    const otherOutcome = report.status !== swap.status;
    if (otherOutcome)
      conflicts.push({ field: 'status', finalValue: swap.status, reportedValue: report.status });
    for (const field of REPORT_FIELDS) {
      const after = values[field];
      if (after === null) continue;
      const before = swap[field];
      if (before === null) {
        if (!otherOutcome) fills[field] = after;
      } else if (!sameValue(field, before, after))
        conflicts.push({ field, finalValue: before, reportedValue: after });
    }
    return { kind: 'final', fills, conflicts, stale: false };
  }
  const becomes = reportClass(report);
  const changes: Record<string, [unknown, unknown]> = {};
  if (report.status !== swap.status) changes.status = [swap.status, report.status];
  if (becomes !== swap.statusClass) changes.statusClass = [swap.statusClass, becomes];
  for (const field of REPORT_FIELDS) {
    const after = values[field];
    if (after !== null && !sameValue(field, swap[field], after)) changes[field] = [swap[field], after];
  }
  if (becomes === 'final') {
    changes.final = [false, true];
    // Figures reported before the final status are the partner's estimates; the final ones are those the
    // final report carries. One it does not carry is unknown (the confirming poll fills it), never the
    // estimate: a fee estimate kept as final would make the fee actually charged look like a conflict.
    for (const field of REPORT_MONEY)
      if (values[field] === null && swap[field] !== null) changes[field] = [swap[field], null];
  }
  return { kind: 'open', changes, becomes };
}

/** Whether the report would change anything (a conflict counts: the fold records it). */
export function reportChangesSomething(d: ReportDifferences): boolean {
  return d.kind === 'open'
    ? Object.keys(d.changes).length > 0
    : Object.keys(d.fills).length > 0 || d.conflicts.length > 0;
}

// ---- a partner's word as a report ----

/** What a GET /status answer carries (interface v2 Status), as the partner client read it. */
export interface StatusAnswer {
  /** The partner's own status string; the report carries it as mapped (`MappedStatus`). */
  readonly status?: string | undefined;
  readonly amount?: string | null | undefined;
  readonly providerFees?: string | null | undefined;
  readonly referralFees?: string | null | undefined;
  readonly payoutNetworkFees?: string | null | undefined;
  readonly payinTransactionId?: string | null | undefined;
  readonly payoutTransactionId?: string | null | undefined;
  readonly quoteId?: string | null | undefined;
}

/** The status webhook's body (interface v2 StatusWebhookRequest), once validated. */
export interface WebhookStatusBody {
  readonly amount: string;
  readonly providerFees?: string | null | undefined;
  /** "Referral or extra fee": which one, the reconciler reads by evidence unless the provider's setup says. */
  readonly networkFees?: string | null | undefined;
  readonly payinTransactionId?: string | null | undefined;
  readonly transactionHash?: string | null | undefined;
}

/**
 * Where the interface's one outgoing hash goes: a REFUNDED swap's is the refund's, kept apart, never a payout
 * (the reconciler's refund evidence); any other status's is the payout's.
 */
function outgoingHash(mapped: MappedStatus, hash: string | null | undefined) {
  const refunded = mapped.status === 'REFUNDED';
  return {
    payoutTransactionId: refunded ? null : (hash ?? null),
    refundTransactionId: refunded ? (hash ?? null) : null,
  };
}

/** The StatusReported payload of a poll: the mapped status and class decided here, values as sent. */
export function pollReport(mapped: MappedStatus, s: StatusAnswer): StatusReported {
  return {
    providerStatus: mapped.providerStatus,
    status: mapped.status,
    final: mapped.final,
    statusClass: mapped.statusClass,
    amount: s.amount ?? null,
    providerFees: s.providerFees ?? null,
    referralFees: s.referralFees ?? null,
    payoutNetworkFees: s.payoutNetworkFees ?? null,
    payinTransactionId: s.payinTransactionId ?? null,
    ...outgoingHash(mapped, s.payoutTransactionId),
    quoteId: s.quoteId ?? null,
    extraFees: null,
    networkFees: null,
    networkFeesReading: null,
  };
}

/**
 * How the webhook's `networkFees` ("referral or extra fee") is read. `evidence` (the default): against the
 * referral fee the partner committed to, by the reconciler (equal: the referral fee; above: the referral fee
 * plus an extra fee; below: a referral cut). `referral` / `extra`: a provider's explicit override.
 */
export type WebhookNetworkFees = 'evidence' | 'referral' | 'extra';
export const WEBHOOK_NETWORK_FEES: readonly WebhookNetworkFees[] = ['evidence', 'referral', 'extra'];

/**
 * The StatusReported payload of a status webhook. It carries no payout network fee. Its `networkFees` is
 * recorded as sent with the reading in force (so a later setting never changes a replay): under `evidence`
 * it is neither revenue nor an extra fee until the reconciler reads it; under an override it is booked as
 * the referral fee or recorded as an extra fee, as before.
 */
export function webhookReport(
  mapped: MappedStatus,
  body: WebhookStatusBody,
  networkFees: WebhookNetworkFees,
): StatusReported {
  const sent = body.networkFees ?? null;
  return {
    providerStatus: mapped.providerStatus,
    status: mapped.status,
    final: mapped.final,
    statusClass: mapped.statusClass,
    amount: body.amount,
    providerFees: body.providerFees ?? null,
    referralFees: networkFees === 'referral' ? sent : null,
    payoutNetworkFees: null,
    payinTransactionId: body.payinTransactionId ?? null,
    ...outgoingHash(mapped, body.transactionHash),
    quoteId: null,
    extraFees: networkFees === 'extra' ? sent : null,
    networkFees: sent,
    networkFeesReading: networkFees,
  };
}
