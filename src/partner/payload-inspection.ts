// Bridge to the signed-payload module: the client hands every created swap to inspectSwapPayload.
import { inspectSwapPayload, type PartnerKey, type PayloadInspection } from '../payload/index.ts';
import type {
  QuoteResponse,
  SwapRequestFixed,
  SwapRequestFloat,
  SwapResponse,
  TradeMethod,
} from './types.ts';

/** The provider's key history; a function is read at each swap so a rotated key list applies at once. */
export type PayloadKeys = readonly PartnerKey[] | (() => readonly PartnerKey[]);

export type SwapPayloadInspection = PayloadInspection;

export interface PayloadInspectionInput {
  readonly tradeMethod: TradeMethod;
  readonly request: SwapRequestFixed | SwapRequestFloat;
  readonly response: SwapResponse;
  readonly quote?: QuoteResponse | undefined;
  readonly keys: PayloadKeys;
}

export type PayloadInspector = (input: PayloadInspectionInput) => Promise<SwapPayloadInspection>;

export const inspectProviderSig: PayloadInspector = (input) =>
  inspectSwapPayload({
    providerSig: input.response.providerSig,
    request: input.request,
    response: input.response,
    quote: input.quote,
    tradeMethod: input.tradeMethod,
    keys: typeof input.keys === 'function' ? input.keys() : input.keys,
    createdAt: input.response.createdAt,
  });
