import type { SwapEvent } from '../events/types.ts';
import { isDecimalText } from '../money/decimal.ts';
import { storableTextProblem } from '../swap/text.ts';

/**
 * The fold's own input bounds, for events that reached the log without passing an edge (an old log, a
 * hand-made or injected event): a value the database would refuse, or that the money rules cannot hold
 * exactly, makes the event rejected with the reason, deterministically, instead of halting the partition.
 */

/**
 * Whether any text in the value holds a U+0000 (the common event has none). Own keys only: a decoded
 * event's records are avsc objects whose prototype methods (clone, toBuffer, wrap…) a `for…in` would
 * also visit, which cost this walk more than half its time.
 */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (hasNul(v)) return true;
    return false;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) if (hasNul((value as Record<string, unknown>)[keys[i]!])) return true;
  return false;
}

/** Where a U+0000 sits, once hasNul found one. */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = nulPath(v, path ? `${path}.${k}` : k);
      if (p) return p;
    }
  }
  return undefined;
}

function moneyProblem(fields: Record<string, string | null | undefined>): string | undefined {
  for (const [name, v] of Object.entries(fields)) {
    if (v === null || v === undefined || v.trim() === '') continue;
    if (!isDecimalText(v) || (v.startsWith('-') && /[1-9]/.test(v)))
      return `${name} "${v.slice(0, 60)}${v.length > 60 ? '…' : ''}" is not a non-negative decimal of at most 40 integer and 36 fraction digits`;
  }
  return undefined;
}

function textProblem(fields: Record<string, string | null | undefined>): string | undefined {
  for (const [name, v] of Object.entries(fields)) {
    if (v === null || v === undefined) continue;
    const problem = storableTextProblem(v);
    if (problem) return `${name} ${problem}`;
  }
  return undefined;
}

/** The verdict per event: the batch loader and the fold both ask, and an event is immutable. */
const verdicts = new WeakMap<SwapEvent, string | null>();

/** Why the fold must reject this event whatever the state, or undefined. */
export function inadmissible(event: SwapEvent): string | undefined {
  let verdict = verdicts.get(event);
  if (verdict === undefined) {
    verdict = inadmissibleNow(event) ?? null;
    verdicts.set(event, verdict);
  }
  return verdict ?? undefined;
}

function inadmissibleNow(event: SwapEvent): string | undefined {
  if (hasNul(event)) {
    const nul = nulPath(event, '');
    if (nul) return `${nul} contains U+0000, which the database cannot store`;
  }
  switch (event.eventType) {
    case 'StatusReported':
    case 'StatusContradicted': {
      const p = event.eventType === 'StatusReported' ? event.payload : event.payload.report;
      return (
        moneyProblem({
          amount: p.amount,
          providerFees: p.providerFees,
          referralFees: p.referralFees,
          payoutNetworkFees: p.payoutNetworkFees,
          extraFees: p.extraFees,
          networkFees: p.networkFees ?? null,
        }) ??
        textProblem({
          swapId: event.swapId,
          providerStatus: p.providerStatus,
          payinTransactionId: p.payinTransactionId,
          payoutTransactionId: p.payoutTransactionId,
          refundTransactionId: p.refundTransactionId,
          quoteId: p.quoteId,
        })
      );
    }
    case 'SwapCreated': {
      const p = event.payload;
      return (
        moneyProblem({
          amountFrom: p.request.amountFrom,
          slippage: p.request.slippage,
          providerFees: p.providerFees,
          referralFees: p.referralFees,
          payoutNetworkFees: p.payoutNetworkFees,
          quoteAmountTo: p.quote?.amountTo,
          quoteAmountFrom: p.quote?.amountFrom,
          quoteDefaultSlippage: p.quote?.defaultSlippage,
        }) ??
        textProblem({
          swapId: event.swapId,
          payinAddress: p.payinAddress,
          payoutAddress: p.request.payoutAddress,
          payoutAddressExtraId: p.request.payoutAddressExtraId,
          refundAddress: p.request.refundAddress,
          refundAddressExtraId: p.request.refundAddressExtraId,
          quoteId: p.request.quoteId,
        })
      );
    }
    case 'SwapCorrected':
      return moneyProblem({
        amount: event.payload.amount,
        providerFees: event.payload.providerFees,
        referralFees: event.payload.referralFees,
        payoutNetworkFees: event.payload.payoutNetworkFees,
      });
    default:
      return undefined;
  }
}

/** The payload as the journal can store it: U+0000 shown as U+FFFD (the event's bytes stay in Kafka). */
export function storablePayload(payload: unknown): unknown {
  return hasNul(payload) ? withoutNul(payload) : payload;
}

/** A copy with every U+0000 in its texts as U+FFFD (texts only: a literal backslash-u0000 stays as it is). */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd');
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withoutNul);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = withoutNul((value as Record<string, unknown>)[k]);
  return out;
}
