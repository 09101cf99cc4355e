import { Decimal, formatDecimal, isDecimalText } from '../money/decimal.ts';
import type { projection } from '../db/projection.ts';
import { FINISHED, REFUNDED } from '../swap/status.ts';
import type { Account, EntryKind } from './accounts.ts';

/**
 * The posting rules of the finance ledger (README, "Finance ledger"): a PURE function of the swap row before
 * and after one fold step and of the swap's postings so far. No clock, no configuration, no I/O; money as
 * decimal text in and out, computed with the project's 80-digit Decimal.
 */

export type { Account, EntryKind };
export type PostingRow = typeof projection.ledgerPostings.$inferSelect;

/** The swap fields the rules read (a SwapRow has them all). */
export interface SwapFigures {
  swapId: string;
  providerId: string;
  payloadCurrencyFrom: string;
  payloadCurrencyTo: string;
  status: string;
  final: boolean;
  finalAt: string | null;
  version: number;
  amountFrom: string | null;
  amountTo: string | null;
  providerFees: string | null;
  referralFees: string | null;
  payoutNetworkFees: string | null;
}

/** One line before it becomes a row: signed amount, debit positive, credit negative, never zero. */
export interface Leg {
  account: Account;
  currency: string;
  amount: Decimal;
}

/** A known, non-zero amount; empty, missing or non-decimal text is unknown (nothing is guessed). */
function known(text: string | null): Decimal | undefined {
  if (text === null || !isDecimalText(text)) return undefined;
  const d = new Decimal(text);
  return d.isZero() ? undefined : d;
}

/**
 * The lines a swap's current figures call for (empty while it is not final).
 * FINISHED: the payin to the partner (source currency) and the partner's gross output split into the
 * payout to the user, the payout network fee, the partner's fee and the referral fee receivable by the
 * platform (destination currency), each leg against the partner's clearing account of its currency.
 * REFUNDED: the payin to the partner and its return, both of the requested source amount (the interface
 * defines no refund amount; see the README). EXPIRED and any other final status: nothing moved, no lines.
 * Unknown figures (null) post nothing; finance.ledger_exceptions lists such swaps.
 */
export function swapLegs(s: SwapFigures): Leg[] {
  if (!s.final) return [];
  const from = s.payloadCurrencyFrom;
  const to = s.payloadCurrencyTo;
  const payin = known(s.amountFrom);
  const legs: Leg[] = [];
  if (s.status === REFUNDED) {
    if (payin) {
      legs.push({ account: 'partner_clearing', currency: from, amount: payin });
      legs.push({ account: 'user_payin', currency: from, amount: payin.neg() });
      legs.push({ account: 'user_payin', currency: from, amount: payin });
      legs.push({ account: 'partner_clearing', currency: from, amount: payin.neg() });
    }
    return legs;
  }
  if (s.status !== FINISHED) return legs;
  if (payin) {
    legs.push({ account: 'partner_clearing', currency: from, amount: payin });
    legs.push({ account: 'user_payin', currency: from, amount: payin.neg() });
  }
  let gross = new Decimal(0);
  const out: [Account, string | null][] = [
    ['user_payout', s.amountTo],
    ['payout_network_fees', s.payoutNetworkFees],
    ['partner_fees', s.providerFees],
    ['referral_fees_receivable', s.referralFees],
  ];
  for (const [account, text] of out) {
    const amount = known(text);
    if (!amount) continue;
    legs.push({ account, currency: to, amount });
    gross = gross.plus(amount);
  }
  if (!gross.isZero()) legs.push({ account: 'partner_clearing', currency: to, amount: gross.neg() });
  return legs;
}

const ACCOUNT_ORDER: readonly Account[] = [
  'partner_clearing',
  'user_payin',
  'user_payout',
  'payout_network_fees',
  'partner_fees',
  'referral_fees_receivable',
  'write_offs',
  'referral_cash',
];

/**
 * Sums legs per account and currency (and, with `bySign`, keeps debits and credits apart), drops zero sums,
 * and orders them: source currency first, then the destination, then any other; debits before credits;
 * accounts in chart order. The order only numbers lines; it never changes a figure.
 */
export function aggregate(legs: readonly Leg[], s: SwapFigures, bySign = false): Leg[] {
  const sums = new Map<string, Leg>();
  for (const leg of legs) {
    const sign = bySign ? (leg.amount.isNegative() ? '-' : '+') : '';
    const key = `${leg.account}\u0000${leg.currency}\u0000${sign}`;
    const prev = sums.get(key);
    sums.set(key, prev ? { ...prev, amount: prev.amount.plus(leg.amount) } : { ...leg });
  }
  const side = (c: string) => (c === s.payloadCurrencyFrom ? 0 : c === s.payloadCurrencyTo ? 1 : 2);
  return [...sums.values()]
    .filter((l) => !l.amount.isZero())
    .sort(
      (a, b) =>
        side(a.currency) - side(b.currency) ||
        (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0) ||
        Number(a.amount.isNegative()) - Number(b.amount.isNegative()) ||
        ACCOUNT_ORDER.indexOf(a.account) - ACCOUNT_ORDER.indexOf(b.account),
    );
}

const legOf = (p: PostingRow): Leg => ({
  account: p.account as Account,
  currency: p.currency,
  amount: new Decimal(p.amount),
});

/**
 * The swap's postings in force: those written since its last reversal (that reversal's own lines
 * excluded), i.e. the figures the journal currently carries for it.
 */
export function inForce(all: readonly PostingRow[]): PostingRow[] {
  // A write-off (a case's decision) and a settlement (the partner's payment) are not figures of the swap: a
  // correction never reverses them.
  const postings = all.filter((p) => p.entryKind !== 'write_off' && p.entryKind !== 'settlement');
  let lastReversal = -1;
  for (const p of postings)
    if (p.entryKind === 'reversal' && p.swapVersion > lastReversal) lastReversal = p.swapVersion;
  return postings.filter((p) =>
    lastReversal < 0 ? true : p.swapVersion >= lastReversal && p.entryKind !== 'reversal',
  );
}

const sameLegs = (a: readonly Leg[], b: readonly Leg[]) =>
  a.length === b.length &&
  a.every(
    (l, i) => l.account === b[i]!.account && l.currency === b[i]!.currency && l.amount.eq(b[i]!.amount),
  );

export interface PostingCause {
  /** A status report (the swap became final, or a still-unknown value of a final swap arrived) or an applied SwapCorrected. */
  kind: 'report' | 'correction';
  eventId: string;
  recordedAt: string;
}

/**
 * The ledger rows one applied event writes for a swap, given the swap before and after the fold step and
 * the swap's postings so far (any order). Empty when the event moves nothing.
 * - report, the swap becomes final: a `final` entry of swapLegs(after), effective at its final time.
 * - report, the swap was final already (the confirming poll fills a value still unknown): a `completion`
 *   entry of the difference between swapLegs(after) and the postings in force, effective at the final time.
 * - correction changing what swapLegs gives: a `reversal` entry negating the postings in force (summed per
 *   account, currency and side), effective when they were, then a `correction` entry of swapLegs(after),
 *   effective at the corrected swap's final time. A correction that leaves the figures alone posts nothing.
 */
export function ledgerPostings(
  cause: PostingCause,
  before: SwapFigures,
  after: SwapFigures,
  postings: readonly PostingRow[],
): PostingRow[] {
  const entries: { kind: EntryKind; legs: Leg[]; effectiveAt: string }[] = [];
  const current = inForce(postings);
  if (cause.kind === 'report') {
    if (!after.final) return [];
    if (!before.final) {
      entries.push({ kind: 'final', legs: swapLegs(after), effectiveAt: after.finalAt! });
    } else {
      const delta = aggregate(
        [...swapLegs(after), ...current.map(legOf).map((l) => ({ ...l, amount: l.amount.neg() }))],
        after,
      );
      entries.push({ kind: 'completion', legs: delta, effectiveAt: after.finalAt! });
    }
  } else {
    if (sameLegs(swapLegs(before), swapLegs(after)) && before.finalAt === after.finalAt) return [];
    const reversed = aggregate(
      current.map(legOf).map((l) => ({ ...l, amount: l.amount.neg() })),
      after,
      true,
    );
    if (reversed.length > 0) {
      // Effective when the reversed figures were: the swap's final time before the correction.
      entries.push({
        kind: 'reversal',
        legs: reversed,
        effectiveAt: before.finalAt ?? current[0]!.effectiveAt,
      });
    }
    if (after.final) entries.push({ kind: 'correction', legs: swapLegs(after), effectiveAt: after.finalAt! });
  }
  const rows: PostingRow[] = [];
  for (const entry of entries) {
    for (const leg of entry.legs) {
      const line = rows.length + 1;
      rows.push({
        postingId: `${cause.eventId}:${line}`,
        entryId: cause.eventId,
        line,
        entryKind: entry.kind,
        swapId: after.swapId,
        swapVersion: after.version,
        providerId: after.providerId,
        account: leg.account,
        currency: leg.currency,
        amount: formatDecimal(leg.amount),
        effectiveAt: entry.effectiveAt,
        recordedAt: cause.recordedAt,
      });
    }
  }
  return rows;
}

/** Sum of amounts per currency (zero everywhere for a balanced set of postings). */
export function sumsByCurrency(
  postings: readonly { currency: string; amount: string }[],
): Map<string, string> {
  const sums = new Map<string, Decimal>();
  for (const p of postings) sums.set(p.currency, (sums.get(p.currency) ?? new Decimal(0)).plus(p.amount));
  return new Map([...sums].map(([c, d]) => [c, formatDecimal(d)]));
}

/**
 * A case's approved write-off (an accepted loss): the amount debited to `write_offs` against the partner's
 * clearing account of its currency, the claim on the partner given up. One balanced entry of the approving
 * event, effective when it was approved; never reversed by a later correction of the swap (inForce).
 */
export function writeOffPostings(
  cause: { eventId: string; occurredAt: string; recordedAt: string },
  swap: Pick<SwapFigures, 'swapId' | 'providerId' | 'version'>,
  writeOff: { amount: string; currency: string },
): PostingRow[] {
  const amount = new Decimal(writeOff.amount);
  if (!amount.isPositive() || amount.isZero())
    throw new Error(`a write-off is positive, got ${writeOff.amount}`);
  const legs: Leg[] = [
    { account: 'write_offs', currency: writeOff.currency, amount },
    { account: 'partner_clearing', currency: writeOff.currency, amount: amount.neg() },
  ];
  return legs.map((leg, i) => ({
    postingId: `${cause.eventId}:${i + 1}`,
    entryId: cause.eventId,
    line: i + 1,
    entryKind: 'write_off',
    swapId: swap.swapId,
    swapVersion: swap.version,
    providerId: swap.providerId,
    account: leg.account,
    currency: leg.currency,
    amount: formatDecimal(leg.amount),
    effectiveAt: cause.occurredAt,
    recordedAt: cause.recordedAt,
  }));
}

/**
 * An invoice's payment: per allocated line, `referral_cash` debited and the swap's `referral_fees_receivable`
 * credited, in the payment's currency. One balanced entry of the settling event, effective when recorded;
 * never reversed by a later correction of the swap (inForce).
 */
export function settlementPostings(
  cause: { eventId: string; providerId: string; recordedAt: string },
  currency: string,
  allocations: readonly { swapId: string; swapVersion: number; amount: string }[],
): PostingRow[] {
  return allocations.flatMap((a, i) => {
    const amount = new Decimal(a.amount);
    if (!amount.isPositive() || amount.isZero()) throw new Error(`a settlement is positive, got ${a.amount}`);
    const legs: Leg[] = [
      { account: 'referral_cash', currency, amount },
      { account: 'referral_fees_receivable', currency, amount: amount.neg() },
    ];
    return legs.map((leg, j) => ({
      postingId: `${cause.eventId}:${2 * i + j + 1}`,
      entryId: cause.eventId,
      line: 2 * i + j + 1,
      entryKind: 'settlement',
      swapId: a.swapId,
      swapVersion: a.swapVersion,
      providerId: cause.providerId,
      account: leg.account,
      currency: leg.currency,
      amount: formatDecimal(leg.amount),
      effectiveAt: cause.recordedAt,
      recordedAt: cause.recordedAt,
    }));
  });
}
