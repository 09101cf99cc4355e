import type { SwapCreated } from '../events/types.ts';
import type { DecimalsLookup } from '../money/currencies.ts';
import {
  inspectSwapPayload,
  type InspectSwapPayloadInput,
  type PartnerKey,
  type ProviderSig,
  type SwapRequestFields,
  type TradeMethod,
} from '../payload/index.ts';
import { reconcileSwap } from './checks.ts';
import type { ReconciliationPolicy } from './policy.ts';
import type { FinalReport, ReconciliationInput, ReconciliationResult, SwapCreationFacts } from './types.ts';

/** The request fields the payload signs: the checks and the payload inspection read the same ones. */
function signedRequestFields(r: Omit<SwapRequestFields, 'amount'>): Omit<SwapRequestFields, 'amount'> {
  return {
    payloadCurrencyFrom: r.payloadCurrencyFrom,
    payloadCurrencyTo: r.payloadCurrencyTo,
    nonce: r.nonce,
    payoutAddress: r.payoutAddress,
    payoutAddressExtraId: r.payoutAddressExtraId,
    refundAddress: r.refundAddress,
    refundAddressExtraId: r.refundAddressExtraId,
  };
}

/** The creation facts as the SwapCreated event recorded them. */
export function creationFactsFromSwapCreated(event: SwapCreated): SwapCreationFacts {
  const r = event.request;
  return {
    tradeMethod: r.tradeMethod,
    request: {
      ...signedRequestFields(r),
      amountFrom: r.amountFrom,
      slippage: r.slippage,
    },
    quote: event.quote
      ? {
          amountFrom: event.quote.amountFrom,
          defaultSlippage: event.quote.defaultSlippage,
          tradeMethod: event.quote.tradeMethod,
          amountTo: event.quote.amountTo,
          providerFees: event.quote.providerFees,
          referralFees: event.quote.referralFees,
          payoutNetworkFees: event.quote.payoutNetworkFees,
        }
      : null,
    payinAddress: event.payinAddress,
    createdAt: event.createdAt,
    fees: {
      providerFees: event.providerFees,
      referralFees: event.referralFees,
      payoutNetworkFees: event.payoutNetworkFees,
    },
    providerSig: {
      payload: event.providerSigPayload,
      signature: event.providerSigSignature,
      field: event.providerSigField,
    },
  };
}

/** The final columns of a projected swaps row. */
export interface SwapFinalColumns {
  readonly status: string;
  readonly final: boolean;
  readonly amountTo: string | null;
  readonly providerFees: string | null;
  readonly referralFees: string | null;
  readonly payoutNetworkFees: string | null;
  readonly payinTransactionId: string | null;
  readonly payoutTransactionId: string | null;
  /** The refund's transaction; optional until the projection stores it. */
  readonly refundTransactionId?: string | null | undefined;
  readonly statusClass?: string | null | undefined;
  readonly extraFees?: string | null | undefined;
  readonly webhookNetworkFees?: string | null | undefined;
}

export function finalReportFromSwapRow(row: SwapFinalColumns): FinalReport {
  return {
    status: row.status,
    final: row.final,
    amount: row.amountTo,
    providerFees: row.providerFees,
    referralFees: row.referralFees,
    payoutNetworkFees: row.payoutNetworkFees,
    payinTransactionId: row.payinTransactionId,
    payoutTransactionId: row.payoutTransactionId,
    refundTransactionId: row.refundTransactionId ?? null,
    statusClass: row.statusClass ?? null,
    extraFees: row.extraFees ?? null,
    webhookNetworkFees: row.webhookNetworkFees ?? null,
  };
}

/** providerSig as the partner sent it: the signature under the field name it used. */
function providerSigOf(creation: SwapCreationFacts): ProviderSig {
  const { payload, signature, field } = creation.providerSig;
  return field === 'payload_signature' ? { payload, payload_signature: signature } : { payload, signature };
}

/** What inspectSwapPayload needs to check `creation`'s payload with the partner's key history. */
export function inspectionInputFor(
  creation: SwapCreationFacts,
  keys: readonly PartnerKey[],
  magnitudes?: DecimalsLookup,
): InspectSwapPayloadInput {
  const r = creation.request;
  return {
    providerSig: providerSigOf(creation),
    request: {
      ...signedRequestFields(r),
      amount: r.amountFrom,
    },
    response: { payinAddress: creation.payinAddress },
    quote: creation.quote ? { amount: creation.quote.amountFrom } : undefined,
    // An unknown method reaches inspect as is; it reports the source amount unverifiable.
    tradeMethod: creation.tradeMethod as TradeMethod,
    keys,
    createdAt: creation.createdAt,
    magnitudes,
  };
}

/**
 * Verifies the payload with the keys valid at createdAt (the only async step; CPU only, no I/O)
 * and reconciles. The worker may call inspectSwapPayload itself and reconcileSwap with the result.
 */
export async function inspectAndReconcile(
  facts: Omit<ReconciliationInput, 'inspection'>,
  keys: readonly PartnerKey[],
  policy: ReconciliationPolicy,
): Promise<ReconciliationResult> {
  const inspection = await inspectSwapPayload(inspectionInputFor(facts.creation, keys, facts.magnitudes));
  return reconcileSwap({ ...facts, inspection }, policy);
}
