// Over 400 lines on purpose: the whole event catalog's declarations in one file, field for field beside
// schemas/events/*.avsc, so a change to an event is made and reviewed against its schema in one place.
/**
 * The event catalog in TypeScript, mirroring schemas/events/*.avsc. Amounts and fees are decimal
 * strings, atomic units are decimal strings of integers, times are ISO-8601 UTC strings.
 */

export type EventSource = 'gateway' | 'webhook' | 'poll' | 'reconciler' | 'ops' | 'chain';
export type TradeMethod = 'fixed' | 'float';

export interface QuoteTerms {
  quoteRef: string;
  quoteId: string | null;
  tradeMethod: string;
  currencyFrom: string;
  currencyTo: string;
  amountFrom: string | null;
  amountTo: string;
  providerFees: string;
  referralFees: string;
  payoutNetworkFees: string;
  expiry: string | null;
  defaultSlippage: string | null;
  minSlippage: string | null;
  maxSlippage: string | null;
  extraFieldsJson: string | null;
}

export interface QuoteReceived {
  quote: QuoteTerms;
}

export interface QuoteRejected {
  quoteRef: string;
  tradeMethod: string;
  currencyFrom: string;
  currencyTo: string;
  amountFrom: string | null;
  httpStatus: number | null;
  errorKey: string | null;
  message: string;
  additionalFieldsJson: string | null;
}

export interface SwapRequest {
  tradeMethod: string;
  quoteRef: string | null;
  quoteId: string | null;
  amountFrom: string | null;
  currencyFrom: string;
  currencyTo: string;
  payloadCurrencyFrom: string;
  payloadCurrencyTo: string;
  payoutAddress: string;
  payoutAddressExtraId: string | null;
  refundAddress: string;
  refundAddressExtraId: string | null;
  nonce: string;
  slippage: string | null;
}

export interface SwapRequested {
  requestId: string;
  idempotencyKey: string | null;
  request: SwapRequest;
}

export interface Finding {
  check: string;
  outcome: string;
  expected: string | null;
  actual: string | null;
  detail: string | null;
}

export interface SwapCreated {
  requestId: string;
  request: SwapRequest;
  quote: QuoteTerms | null;
  payinAddress: string;
  createdAt: string;
  /** Null when the partner sent no decimal text (a `response.fee_format` finding says so). */
  providerFees: string | null;
  referralFees: string | null;
  payoutNetworkFees: string | null;
  providerSigPayload: string;
  providerSigSignature: string | null;
  providerSigField: string;
  signatureValid: boolean;
  keyId: string | null;
  decodedPayloadJson: string | null;
  signedAmountToProvider: string | null;
  signedAmountToWallet: string | null;
  findings: Finding[];
  extraFieldsJson: string | null;
}

export type CreationFailureKind = 'partner_error' | 'outcome_unknown' | 'invalid_response';

export interface SwapCreationFailed {
  requestId: string;
  kind: CreationFailureKind;
  httpStatus: number | null;
  errorKey: string | null;
  message: string;
}

export interface StatusReported {
  providerStatus: string;
  status: string;
  final: boolean;
  /** open | closed | final (src/swap/status.ts); null in events written before classes existed. */
  statusClass: string | null;
  amount: string | null;
  providerFees: string | null;
  referralFees: string | null;
  payoutNetworkFees: string | null;
  payinTransactionId: string | null;
  payoutTransactionId: string | null;
  quoteId: string | null;
  refundTransactionId: string | null;
  extraFees: string | null;
  /** Webhook: its networkFees as sent; null for polls and in events written before it was recorded. */
  networkFees?: string | null;
  /** How ingest read networkFees (WebhookNetworkFees: evidence, referral, extra); null as networkFees. */
  networkFeesReading?: string | null;
}

export interface StatusContradicted {
  report: StatusReported;
  knownStatus: string;
}

export interface ReconciliationCheck {
  name: string;
  verdict: string;
  expected: string | null;
  actual: string | null;
  delta: string | null;
  tolerance: string | null;
  detail: string | null;
}

export interface SwapReconciled {
  verdict: string;
  basedOnEventId: string;
  checks: ReconciliationCheck[];
  /**
   * The reconciler judged after an evidence deadline passed (a figure never reported, a chain lookup past its
   * deadline): an UNVERIFIABLE verdict then opens a case. Absent (false) in events written before cases.
   */
  evidenceDeadlinePassed?: boolean;
}

export interface SwapCorrected {
  operator: string;
  reason: string;
  status: string | null;
  final: boolean | null;
  amount: string | null;
  providerFees: string | null;
  referralFees: string | null;
  payoutNetworkFees: string | null;
}

export interface DeadLetterRetried {
  deadLetterId: string;
  operator: string;
  reason: string | null;
  replacementEventJson: string | null;
}

export interface DeadLetterDiscarded {
  deadLetterId: string;
  operator: string;
  reason: string;
}

/**
 * An operator re-applies an event journaled as rejected once its cause is fixed (`events reapply`). The
 * fold applies the carried event at this event's position, under this event's id.
 */
export interface EventReapplied {
  eventId: string;
  eventType: string;
  operator: string;
  reason: string;
  eventJson: string;
}

export type ChainRole = 'payin' | 'payout' | 'refund';
export type ChainFamily = 'evm' | 'utxo';
/**
 * found: at the depth needed; pending: seen with fewer confirmations (0: in the mempool); not_found; reverted:
 * mined and failed (EVM status 0), so it pays nothing.
 */
export type ChainObservationStatus = 'found' | 'pending' | 'not_found' | 'reverted' | 'refused';

/** One movement of value a chain transaction made. */
export interface ChainTransfer {
  /** 'native', or the token's contract address (EVM, lower case). */
  asset: string;
  recipient: string;
  /** Atomic units, decimal text of an integer: never a JS number. */
  amount: string;
  /**
   * Which movement of the transaction: UTXO output index, EVM token Transfer log index; null for an EVM
   * transaction's own native value (and in events written before it was recorded). One transfer, one claim.
   */
  index?: number | null;
}

/**
 * What the chain watcher saw of a transaction a partner reported for a swap. The watcher decides (depth
 * needed, asset, deadline passed) and the event carries the decisions: the fold never reads a chain or config.
 */
export interface ChainTransactionObserved {
  currency: string;
  chain: string;
  family: string;
  txid: string;
  role: string;
  status: string;
  confirmations: number;
  requiredConfirmations: number;
  block: number | null;
  blockHash: string | null;
  asset: string;
  decimals: number;
  transfers: ChainTransfer[];
  source: string;
  proven: boolean;
  deadlinePassed: boolean;
  observedAt: string;
  detail: string | null;
  /** ISO-8601 UTC time of the block that mined it; null until mined (or in older events). */
  blockTime?: string | null;
  /** Fee the transaction spent, atomic units of the chain's native asset; null when not known. */
  fee?: string | null;
  /** EVM: a contract call, whose internal native value moves the standard JSON-RPC does not show. */
  contractCall?: boolean;
}

/** One figure a statement line states otherwise than the ledger (src/monthend/match.ts). */
export interface StatementDifference {
  field: string;
  ledger: string | null;
  statement: string | null;
  delta: string | null;
  tolerance: string | null;
  direction: string | null;
  verdict: string;
}

/** A statement line and its match, decided at import; lineNo null for a ledger_only entry. */
export interface StatementLineMatch {
  lineNo: number | null;
  swapId: string;
  outcome: string;
  statusWord: string | null;
  status: string | null;
  finishedAt: string | null;
  currencyFrom: string | null;
  amountFrom: string | null;
  currencyTo: string | null;
  amountTo: string | null;
  providerFee: string | null;
  referralFee: string | null;
  payoutNetworkFee: string | null;
  ledgerStatus: string | null;
  priorPeriod: string | null;
  differences: StatementDifference[];
}

/** A partner's monthly statement, imported by an operator; its id is the event's id. */
export interface StatementImported {
  period: string;
  fileName: string;
  fileDigest: string;
  layout: string;
  operator: string;
  reason: string | null;
  supersedes: string | null;
  lines: StatementLineMatch[];
}

/** A month closed: sealed by a digest chained to the previous close's. */
export interface PeriodClosed {
  period: string;
  operator: string;
  reason: string;
  digest: string;
  previousDigest: string | null;
  postingCount: number;
  statementIds: string[];
  acceptedDifferences: boolean;
}

/** A closed month reopened (--force): its seal no longer in force. */
export interface PeriodReopened {
  period: string;
  operator: string;
  reason: string;
  digest: string;
}

/** An operator's action on a swap's case (src/cases/machine.ts); null fields do not apply to the action. */
export interface CaseActed {
  action: string;
  operator: string;
  reason: string;
  outcome: string | null;
  sent: string | null;
  reference: string | null;
  setting: string | null;
  amount: string | null;
  currency: string | null;
  /** partner_paid: what the chain showed of the transaction when verified (absent in older events). */
  verified?: string | null;
}

export interface InvoiceLine {
  swapId: string;
  currency: string;
  referralFee: string;
  /** Why the line is in dispute (left out of the totals); null when invoiced. */
  disputed: string | null;
}

/** A partner's referral invoice of a month (src/monthend/invoice.ts builds it). */
export interface InvoiceIssued {
  invoiceNumber: string;
  period: string;
  operator: string;
  issuedAt: string;
  dueDate: string;
  reason: string | null;
  supersedes: string | null;
  lines: InvoiceLine[];
  totals: { currency: string; amount: string }[];
}

/** A partner's payment of an invoice, split across its lines in line order when recorded. */
export interface InvoiceSettled {
  invoiceNumber: string;
  method: string;
  reference: string;
  amount: string;
  currency: string;
  operator: string;
  allocations: { swapId: string; swapVersion: number; amount: string }[];
  /** chain: what the chain showed of the payment when verified (absent in older events). */
  verified?: string | null;
}

export interface PayloadByType {
  QuoteReceived: QuoteReceived;
  QuoteRejected: QuoteRejected;
  SwapRequested: SwapRequested;
  SwapCreated: SwapCreated;
  SwapCreationFailed: SwapCreationFailed;
  StatusReported: StatusReported;
  StatusContradicted: StatusContradicted;
  SwapReconciled: SwapReconciled;
  SwapCorrected: SwapCorrected;
  DeadLetterRetried: DeadLetterRetried;
  DeadLetterDiscarded: DeadLetterDiscarded;
  EventReapplied: EventReapplied;
  ChainTransactionObserved: ChainTransactionObserved;
  StatementImported: StatementImported;
  PeriodClosed: PeriodClosed;
  PeriodReopened: PeriodReopened;
  CaseActed: CaseActed;
  InvoiceIssued: InvoiceIssued;
  InvoiceSettled: InvoiceSettled;
}

export type EventType = keyof PayloadByType;
export const EVENT_TYPES = [
  'QuoteReceived',
  'QuoteRejected',
  'SwapRequested',
  'SwapCreated',
  'SwapCreationFailed',
  'StatusReported',
  'SwapReconciled',
  'SwapCorrected',
  'DeadLetterRetried',
  'DeadLetterDiscarded',
  'StatusContradicted',
  'EventReapplied',
  'ChainTransactionObserved',
  'StatementImported',
  'PeriodClosed',
  'PeriodReopened',
  'CaseActed',
  'InvoiceIssued',
  'InvoiceSettled',
] as const satisfies readonly EventType[];

interface EnvelopeOf<T extends EventType> {
  eventId: string;
  eventType: T;
  swapId: string | null;
  aggregateKey: string;
  providerId: string;
  source: EventSource;
  occurredAt: string;
  recordedAt: string;
  payload: PayloadByType[T];
}

/** A swap event: the envelope with its payload, discriminated by eventType. */
export type SwapEvent = { [T in EventType]: EnvelopeOf<T> }[EventType];
export type SwapEventOf<T extends EventType> = EnvelopeOf<T>;
