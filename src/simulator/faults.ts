import type { PartnerOperation } from '../partner/types.ts';

/**
 * Faults the simulator can inject, as named values so tests of the client, gateway, poller, webhook
 * and reconciler can each ask for exactly one misbehaviour.
 */

/** How a 2xx body is broken by a 'malformed-body' fault. */
export type MalformedVariant =
  /** A 200 whose body is HTML, not JSON. */
  | 'not-json'
  /** JSON cut in the middle. */
  | 'truncated-json'
  | 'empty-body'
  /** Removes `field` (a dotted path such as `pairs.0.minSwapAmount`). */
  | 'drop-field'
  /** Writes the decimal string at `field` as a bare JSON number. */
  | 'number-for-decimal'
  /** Sets `field` to `value`. */
  | 'set-field';

/** Faults of one call of one operation (see injectFault). */
export type CallFault =
  /** An ErrorPayload with this key (documented or not); status defaults to the interface's for the key, else 400. */
  | {
      readonly kind: 'error-key';
      readonly messageKey: string;
      readonly status?: number;
      readonly message?: string;
      readonly additionalFields?: Readonly<Record<string, unknown>>;
    }
  /** 420 with Retry-After (raw header value: seconds or an HTTP date; default "0") and X-RateLimit-* headers. */
  | {
      readonly kind: 'rate-limited';
      readonly retryAfter?: string | null;
      readonly limit?: number;
      readonly remaining?: number;
      readonly reset?: number;
    }
  /** A 5xx (default 500) whose body is a ServerError `{code, message}`, plain text or empty. */
  | {
      readonly kind: 'server-error';
      readonly status?: number;
      readonly body?: 'server-error' | 'text' | 'empty';
    }
  /** Any status with a raw body, for shapes nothing else covers. */
  | {
      readonly kind: 'http-status';
      readonly status: number;
      readonly body: string;
      readonly contentType?: string;
    }
  /** Answers normally after a delay (beyond the client's timeout to simulate a hung partner). */
  | { readonly kind: 'slow'; readonly delayMs: number }
  /** A 200 whose body breaks the interface. On a swap call the swap is still created. */
  | {
      readonly kind: 'malformed-body';
      readonly variant: MalformedVariant;
      readonly field?: string;
      readonly value?: unknown;
    }
  /** Lists: next_cursor repeats the cursor the call was made with. */
  | { readonly kind: 'repeat-cursor' }
  /** Closes the connection without an answer; on a swap call, after the swap is created. */
  | { readonly kind: 'drop-connection' };

export type CallFaultKind = CallFault['kind'];

export const CALL_FAULT_KINDS: readonly CallFaultKind[] = [
  'error-key',
  'rate-limited',
  'server-error',
  'http-status',
  'slow',
  'malformed-body',
  'repeat-cursor',
  'drop-connection',
];

/** Faults in the signed payload of a swap, or its creation figures: applied when the swap is created. */
export const PAYLOAD_FAULTS = [
  /** device_transaction_id_ng is another 32 bytes than the request nonce. */
  'wrong-nonce',
  /** currency_from / currency_to is not the request's payloadCurrencyFrom / payloadCurrencyTo. */
  'wrong-currency-from',
  'wrong-currency-to',
  /** payin_address differs from the response's payinAddress. */
  'wrong-payin-address',
  'wrong-payout-address',
  'wrong-refund-address',
  /** amount_to_provider is 10% (+1 unit) above the source amount. */
  'wrong-source-amount',
  /** amount_to_wallet is 10% (+1 unit) above the quoted output plus the payout network fee. */
  'wrong-destination-amount',
  /** The signature does not verify (one byte of R flipped). */
  'invalid-signature',
  /**
   * Creation figures off the quote (the payload still signs the quoted output): the payout network fee
   * estimate five times the quote's, the final amount short by as much (value hidden in the estimate). On a
   * float swap sent without a quote, "the quote" is the price the partner quotes for it.
   */
  'network-fee-above-quote',
  /** The referral fee (the platform's revenue) a fifth of the quote's, at creation and final. */
  'referral-below-quote',
] as const;
export type PayloadFault = (typeof PAYLOAD_FAULTS)[number];

/** Faults in what the partner reports once the swap reaches a final status (GET /status and webhooks). */
export const FINAL_STATUS_FAULTS = [
  /** The final amount is half the quoted output: below what the payload signed. */
  'final-amount-below-signed',
  /** providerFees doubles (+1 unit) from the creation figure. */
  'fees-differ-from-creation',
  'missing-payin-hash',
  'missing-payout-hash',
  /** No final amount at all. */
  'missing-final-amount',
  /** REFUNDED: no refund transaction reported (the refund is not evidenced). */
  'refund-without-refund-hash',
  /** EXPIRED: a deposit (payin transaction) reported, the swap staying EXPIRED (money moved). */
  'deposit-after-expiry',
  /** REFUNDED: the refund hash reported is the swap's own payin hash (no refund is made). */
  'refund-is-payin',
] as const;
export type FinalStatusFault = (typeof FINAL_STATUS_FAULTS)[number];

/**
 * Faults in the transactions the simulator makes on a chain (only with its `chain` option: without one the
 * hashes it reports are random and no transaction exists to be wrong).
 */
export const CHAIN_FAULTS = [
  /** The payout transaction pays another address than the user's; the partner reports it all the same. */
  'payout-wrong-address',
  /**
   * No payout is made: the partner reports the payout transaction of an earlier swap of its own that paid the
   * same address in the same currency (the same transfer, cited twice). Paid normally when there is none.
   */
  'payout-claimed-twice',
  /**
   * No payout is made: the partner reports a transfer it made before the swap was created (payAhead) to the
   * same address, in the same currency, of at least the amount. Paid normally when there is none.
   */
  'payout-predates-swap',
  /** REFUNDED: the refund transaction pays the refund address a thousandth of the payin (dust). */
  'refund-dust',
] as const;
export type ChainFault = (typeof CHAIN_FAULTS)[number];

/** Faults in what the final webhook says (GET /status stays right). */
export const WEBHOOK_FAULTS = [
  /** networkFees ("referral or extra fee") is twice the referral fee: the referral fee plus an extra fee. */
  'extra-fee-in-network-fees',
] as const;
export type WebhookFault = (typeof WEBHOOK_FAULTS)[number];

export type SwapFault = PayloadFault | FinalStatusFault | ChainFault | WebhookFault;
export const SWAP_FAULTS: readonly SwapFault[] = [
  ...PAYLOAD_FAULTS,
  ...FINAL_STATUS_FAULTS,
  ...CHAIN_FAULTS,
  ...WEBHOOK_FAULTS,
];

export function isPayloadFault(f: string): f is PayloadFault {
  return (PAYLOAD_FAULTS as readonly string[]).includes(f);
}

export function isFinalStatusFault(f: string): f is FinalStatusFault {
  return (FINAL_STATUS_FAULTS as readonly string[]).includes(f);
}

export function isWebhookFault(f: string): f is WebhookFault {
  return (WEBHOOK_FAULTS as readonly string[]).includes(f);
}

export function isChainFault(f: string): f is ChainFault {
  return (CHAIN_FAULTS as readonly string[]).includes(f);
}

export interface InjectOptions {
  /** How many matching calls get the fault. Default 1. */
  readonly times?: number;
  /** For 'status': only calls about this swap. */
  readonly swapId?: string;
}

export type SimulatedOperation = PartnerOperation;
