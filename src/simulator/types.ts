import type { ChainRole } from '../events/types.ts';
import type { PartnerKey } from '../payload/index.ts';
import type { DecimalText, PartnerOperation, StatusWebhookRequest, TradeMethod } from '../partner/types.ts';
import type { SimCurrency, SimPair } from './catalog.ts';
import type { CallFault, InjectOptions, SwapFault } from './faults.ts';
import type { PayloadSigner, SimulatorCurve, SimulatorPublicKey, SwapPayloadFields } from './signer.ts';

/** The simulator's public shapes: its options, what it shows of a swap, a call and a webhook, and its handle. */

/** What a status string means to the simulator: which fields it fills and whether progression stops. */
export type StatusLike =
  'PENDING' | 'ON_HOLD' | 'PROCESSING' | 'FINISHED' | 'REFUNDED' | 'EXPIRED' | 'UNKNOWN';
/**
 * A status to report: a string (the interface's own names behave as such; any other string behaves as
 * PROCESSING), or a partner-specific string with the behaviour of a known one: `{status:'success', like:'FINISHED'}`.
 */
export type StatusStep = string | { readonly status: string; readonly like: StatusLike };

export interface PartnerSimulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (any free port; see `port` of the result). */
  readonly port?: number;
  /** providerId sent in webhooks. Default 'simulator'. */
  readonly providerId?: string;
  /** Curve of a generated signing key. Default secp256k1. */
  readonly curve?: SimulatorCurve;
  /** A fixed signing key (PEM); otherwise one is generated. */
  readonly privateKeyPem?: string;
  readonly currencies?: readonly SimCurrency[];
  readonly pairs?: readonly SimPair[];
  /** Page size when the call gives no `limit`. Default 50. */
  readonly defaultPageSize?: number;
  /** Larger limits are clamped. Default 200. */
  readonly maxPageSize?: number;
  /** Quote validity. Default 10 minutes. */
  readonly quoteTtlMs?: number;
  /** Ratios of the gross output. Defaults 0.005 and 0.0025. */
  readonly fees?: { readonly providerRate?: DecimalText; readonly referralRate?: DecimalText };
  /** Final amount of a float swap relative to its estimate, as a ratio ('-0.01' is 1% less). Default '0'. */
  readonly floatDrift?: DecimalText;
  /** Name of the signature field. Default 'signature'. */
  readonly signatureField?: 'signature' | 'payload_signature' | 'both';
  /** Calls without these exact headers get 401 (a ServerError body). */
  readonly requiredHeaders?: Readonly<Record<string, string>>;
  /** Partner currency ids refused with CURRENCY_REGION_RESTRICTED_ERROR. */
  readonly restrictedCurrencies?: readonly string[];
  /** Source currency ids whose swaps get NO_DEPOSIT_WALLET_ERROR. */
  readonly noDepositWallet?: readonly string[];
  readonly progression?: {
    /** 'manual' (default): only advance() moves a swap; 'poll': each GET /status moves it one step first. */
    readonly advanceOn?: 'manual' | 'poll' | { readonly everyMs: number };
    /** Steps from creation on; the first is the status at creation. Default ['PENDING', 'FINISHED']. */
    readonly script?: readonly StatusStep[] | ((swap: SimSwapView) => readonly StatusStep[]);
    /** Pick each swap's script at random (seeded) from these paths (true: DEFAULT_RANDOM_PATHS). */
    readonly random?: boolean | readonly (readonly StatusStep[])[];
    readonly seed?: number;
  };
  /** How not-yet-known status fields are reported: '' (default) or left out. */
  readonly unknownFields?: 'empty' | 'absent';
  /** Status webhooks to {url}/webhook/{swapId}/status with x-api-key. */
  readonly webhook?: {
    readonly url: string;
    readonly apiKey: string;
    /** Push on every status change. Default true. */
    readonly autoPush?: boolean;
    readonly timeoutMs?: number;
  };
  /** Where payins, payouts and refunds are made for real (advancePaying); without it hashes are random. */
  readonly chain?: SimChain;
  readonly now?: () => Date;
  /** One line per call, for the CLI. */
  readonly log?: (line: string) => void;
}

/** A transaction the simulator makes on a chain (chain-pay.ts). */
export interface ChainMove {
  /** Undefined: a transfer outside any swap (payAhead). */
  readonly swapId: string | undefined;
  readonly role: ChainRole;
  readonly currency: SimCurrency;
  readonly to: string;
  /** Atomic units of the currency. */
  readonly amount: bigint;
  /**
   * A payout's network fee as the partner reports it (atomic units of the same currency): an honest partner
   * reports the fee its payout spent, so a chain that can spend exactly this much does.
   */
  readonly networkFee?: bigint;
}

/** Makes a transaction; undefined when it has no chain for the currency (a random hash is reported then). */
export interface SimChain {
  pay(move: ChainMove): Promise<string | undefined>;
}

/** Fields advance() may set; null clears a field. */
export interface StatusOverrides {
  readonly amount?: DecimalText | null;
  readonly payinTransactionId?: string | null;
  readonly payoutTransactionId?: string | null;
  readonly providerFees?: DecimalText;
  readonly referralFees?: DecimalText;
  readonly payoutNetworkFees?: DecimalText;
}
export interface SimSwapView {
  readonly swapId: string;
  readonly tradeMethod: TradeMethod;
  readonly quoteId: string | undefined;
  readonly request: Readonly<Record<string, unknown>>;
  /** The 200 body as sent. */
  readonly response: Readonly<Record<string, unknown>>;
  readonly createdAt: string;
  readonly currencyFrom: string;
  readonly currencyTo: string;
  /** Source amount (quote's or request's). */
  readonly amountFrom: DecimalText;
  /** Quoted or estimated output sent to the user. */
  readonly amountTo: DecimalText;
  readonly creationFees: {
    readonly providerFees: DecimalText;
    readonly referralFees: DecimalText;
    readonly payoutNetworkFees: DecimalText;
  };
  readonly signed: {
    readonly payload: string;
    readonly signature: string;
    /** As signed, faults included. */
    readonly fields: SwapPayloadFields;
  };
  readonly faults: readonly SwapFault[];
  readonly status: string;
  readonly like: StatusLike;
  readonly final: boolean;
  /** What GET /status answers now. */
  readonly report: Readonly<Record<string, unknown>>;
  readonly history: readonly { readonly status: string; readonly at: string }[];
}

export interface SimCall {
  readonly operation: PartnerOperation;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** The fault applied, if any. */
  readonly fault?: CallFault;
  /** HTTP status answered; undefined when the connection was dropped. */
  status?: number;
}

export interface WebhookDelivery {
  readonly swapId: string;
  readonly url: string;
  readonly body: StatusWebhookRequest;
  readonly status?: number;
  readonly responseBody?: string;
  readonly error?: string;
}

export interface PartnerSimulator {
  readonly url: string;
  readonly port: number;
  readonly providerId: string;
  readonly publicKey: SimulatorPublicKey;
  readonly signer: PayloadSigner;
  /** The simulator's key as a platform key-registry entry (valid from 2000 on unless told). */
  partnerKey(keyId?: string, validFrom?: string): PartnerKey;
  close(): Promise<void>;
  /** The next matching call(s) of `operation` answer with `fault`. */
  injectFault(operation: PartnerOperation, fault: CallFault, options?: InjectOptions): void;
  /**
   * Swap faults: for the next created swap(s) (default one), or final-status faults for an existing swap.
   * Payload faults need a swap not yet created.
   */
  injectSwapFaults(
    faults: readonly SwapFault[],
    target?: { readonly swapId: string } | { readonly nextSwaps: number },
  ): void;
  clearFaults(): void;
  /** Sets a swap's status (any string, even after a final one: partners misbehave) and pushes a webhook. */
  advance(
    swapId: string,
    status: StatusStep,
    fields?: StatusOverrides,
    options?: { readonly notify?: boolean },
  ): SimSwapView;
  /**
   * advance(), after making on the `chain` the payin, payout or refund the status reports, so the hashes
   * reported are real transactions' (without a `chain`: advance()).
   */
  advancePaying(swapId: string, status: StatusStep): Promise<SimSwapView>;
  /**
   * Pays `amount` (decimal text) of a currency to an address outside any swap, on the `chain`: the transfer
   * a later 'payout-predates-swap' reports. Answers its hash; undefined without a chain for the currency.
   */
  payAhead(currencyId: string, to: string, amount: DecimalText): Promise<string | undefined>;
  /** Moves a swap one step along its script (no-op once final or at the end); pushes a webhook on change. */
  step(swapId: string): SimSwapView;
  swaps(): SimSwapView[];
  swap(swapId: string): SimSwapView | undefined;
  calls(operation?: PartnerOperation): SimCall[];
  /** Sends the status webhook now; resolves with the platform's answer (never rejects). */
  pushWebhook(swapId: string, overrides?: Partial<StatusWebhookRequest>): Promise<WebhookDelivery>;
  webhookDeliveries(): WebhookDelivery[];
  /** Waits for webhook pushes under way. */
  settled(): Promise<void>;
  setCurrencies(currencies: readonly SimCurrency[]): void;
  setPairs(pairs: readonly SimPair[]): void;
}
