/**
 * Wire types of the partner interface v2 (docs/architecture.md, "The partner interface"). Amounts and fees stay
 * decimal strings as the partner sent them (validated with isDecimalText); parse them with parseDecimal
 * where arithmetic is needed. Unknown extra fields of a response are kept on the object at run time.
 */

/** Decimal text as carried by the interface: plain notation, checked by isDecimalText. */
export type DecimalText = string;

export type TradeMethod = 'fixed' | 'float';
export const TRADE_METHODS: readonly TradeMethod[] = ['fixed', 'float'];

export type CurrencyType = 'coin' | 'token';

/** The six partner operations (the webhook is served by the platform, not by the partner). */
export type PartnerOperation = 'currencies' | 'pairs' | 'quote' | 'swap-fixed' | 'swap-float' | 'status';

/** Reads may be retried; swap creation never is (each call creates a new swap). */
export const READ_OPERATIONS: readonly PartnerOperation[] = ['currencies', 'pairs', 'quote', 'status'];

export interface Currency {
  readonly id: string;
  readonly type: CurrencyType;
  /** Platform blockchain name; may be omitted when chainId is set, and is ignored then. */
  readonly blockchain?: string;
  /** EVM chain id; wins over blockchain. */
  readonly chainId?: number;
  /** Only for tokens. */
  readonly contract?: string;
}

/** Where a currency lives, with the interface's rule applied: chainId wins over blockchain. */
export type CurrencyNetwork =
  | { readonly kind: 'evm'; readonly chainId: number }
  | { readonly kind: 'named'; readonly blockchain: string };

export interface Page<T> {
  readonly items: readonly T[];
  /** null on the last page. */
  readonly nextCursor: string | null;
}

export interface CurrencyListResponse {
  readonly currencies: readonly Currency[];
  readonly next_cursor: string | null;
}

export interface Pair {
  readonly from: string;
  readonly to: string;
  readonly tradeMethod: readonly TradeMethod[];
  readonly minSwapAmount: DecimalText;
  readonly maxSwapAmount: DecimalText;
}

export interface PairListResponse {
  readonly pairs: readonly Pair[];
  readonly next_cursor: string | null;
}

export interface QuoteRequest {
  readonly from: string;
  readonly to: string;
  /** Always sent: the schema requires it even though its description says "float only". */
  readonly amount: DecimalText;
  /**
   * Not in the interface (it does not say how the partner chooses the trade method); sent only when set,
   * for partners that accept it. When set, the quote's tradeMethod must match.
   */
  readonly tradeMethod?: TradeMethod;
}

export interface QuoteResponse {
  /** Present on fixed quotes (validated). */
  readonly quoteId?: string;
  /** Echo of the input amount; when present it must equal the request's amount. */
  readonly amount?: DecimalText;
  readonly amountTo: DecimalText;
  readonly providerFees: DecimalText;
  readonly referralFees: DecimalText;
  readonly payoutNetworkFees: DecimalText;
  readonly tradeMethod: TradeMethod;
  /** ISO-8601 with an offset (`+0000`, `+00:00` or `Z`); required on fixed quotes. */
  readonly expiry?: string;
  readonly defaultSlippage?: DecimalText;
  readonly minSlippage?: DecimalText;
  readonly maxSlippage?: DecimalText;
  /** Seen only in a sample response; meaning not shown, so kept untouched. */
  readonly minAmountFrom?: unknown;
  readonly maxAmountFrom?: unknown;
}

interface SwapRequestBase {
  readonly refundAddress: string;
  readonly payoutAddress: string;
  readonly refundAddressExtraId?: string;
  readonly payoutAddressExtraId?: string;
  /** Partner currency ids. */
  readonly currencyFrom: string;
  readonly currencyTo: string;
  /** Platform currency ids: currency_from / currency_to of the signed payload. */
  readonly payloadCurrencyFrom: string;
  readonly payloadCurrencyTo: string;
  /** Hex of the 32-byte device nonce: device_transaction_id_ng of the signed payload. */
  readonly nonce: string;
  /** Ratio 0..1. */
  readonly slippage?: DecimalText;
}

export interface SwapRequestFixed extends SwapRequestBase {
  readonly quoteId: string;
}

export interface SwapRequestFloat extends SwapRequestBase {
  readonly amount: DecimalText;
}

/**
 * The signed payload. The schema names the signature `signature`, the sample `payload_signature`: both are
 * accepted, at least one is present, `signature` is preferred (see providerSignatureOf).
 */
export interface ProviderSig {
  readonly payload: string;
  readonly signature?: string;
  readonly payload_signature?: string;
}

export interface SwapResponse {
  readonly swapId: string;
  readonly payinAddress: string;
  readonly createdAt: string;
  /** null: the partner sent no decimal text (a number, null, nothing); the fee is unknown. */
  readonly providerFees: DecimalText | null;
  readonly referralFees: DecimalText | null;
  readonly payoutNetworkFees: DecimalText | null;
  readonly providerSig: ProviderSig;
}

/**
 * 200 of GET /status. `status` is the partner's raw string, never refused here (the per-provider mapping
 * decides). Fields filled "as soon as known" are normalized: empty, null or absent become undefined.
 */
export interface SwapStatus {
  readonly quoteId?: string;
  readonly status: string;
  readonly amount: DecimalText | undefined;
  readonly payinTransactionId: string | undefined;
  readonly payoutTransactionId: string | undefined;
  /** null until known (the interface fills fees "as soon as known"). */
  readonly providerFees: DecimalText | null;
  readonly referralFees: DecimalText | null;
  readonly payoutNetworkFees: DecimalText | null;
}

/** Body of POST {platform_url}/webhook/{swapId}/status (sent by the partner, here by the simulator). */
export interface StatusWebhookRequest {
  readonly providerId: string;
  readonly providerStatus: string;
  readonly amount: DecimalText;
  readonly providerFees?: DecimalText;
  /** "Referral or extra fee" per the interface. */
  readonly networkFees?: DecimalText;
  readonly payinTransactionId?: string;
  readonly transactionHash?: string;
}

/** Error body of the partner endpoints. */
export interface ErrorPayload {
  readonly messageKey: string;
  readonly message: string;
  readonly additionalFields?: Readonly<Record<string, unknown>>;
}

/** Every documented messageKey, with the operations that document it. */
export const DOCUMENTED_MESSAGE_KEYS = [
  'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
  'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR',
  'SWAP_PAIR_NOT_FOUND_ERROR',
  'REGION_RESTRICTED_ERROR',
  'CURRENCY_REGION_RESTRICTED_ERROR',
  'NO_DEPOSIT_WALLET_ERROR',
  'CURRENCY_FROM_NOT_FOUND_ERROR',
  'CURRENCY_TO_NOT_FOUND_ERROR',
  'SWAP_QUOTE_NOT_FOUND_ERROR',
] as const;
export type DocumentedMessageKey = (typeof DOCUMENTED_MESSAGE_KEYS)[number];

/** HTTP status the interface documents for each key. */
export const MESSAGE_KEY_STATUS: Readonly<Record<DocumentedMessageKey, number>> = {
  FROM_CURRENCY_MINIMUM_AMOUNT_ERROR: 400,
  FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR: 400,
  SWAP_PAIR_NOT_FOUND_ERROR: 404,
  REGION_RESTRICTED_ERROR: 451,
  CURRENCY_REGION_RESTRICTED_ERROR: 451,
  NO_DEPOSIT_WALLET_ERROR: 400,
  CURRENCY_FROM_NOT_FOUND_ERROR: 404,
  CURRENCY_TO_NOT_FOUND_ERROR: 404,
  SWAP_QUOTE_NOT_FOUND_ERROR: 404,
};

export function isDocumentedMessageKey(key: string): key is DocumentedMessageKey {
  return (DOCUMENTED_MESSAGE_KEYS as readonly string[]).includes(key);
}

/** Rate limited: the interface's own status code (not 429). */
export const RATE_LIMITED_STATUS = 420;
