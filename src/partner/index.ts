// Public surface of the partner client. The simulator (src/simulator) and certification (src/certify) stand above it.
export {
  PartnerClient,
  isPartnerError,
  type CallOptions,
  type CreatedSwap,
  type ListOptions,
  type PartnerClientOptions,
  type SwapCallOptions,
} from './client.ts';
export { parsePartnerClientConfig, PartnerConfigError, type PartnerClientConfig } from './config.ts';
export {
  AmountLimitError,
  CurrencyNotFoundError,
  NoDepositWalletError,
  PairNotFoundError,
  PartnerApiError,
  PartnerCursorLoopError,
  PartnerError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  QuoteNotFoundError,
  RateLimitedError,
  RegionRestrictedError,
  SwapNotFoundError,
  partnerErrorFromResponse,
  partnerRetryability,
  type PartnerApiErrorKind,
} from './errors.ts';
export {
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  parseRetryAfter,
  retryDecision,
  withRetry,
  type RetryPolicy,
} from './retry.ts';
export { parsePartnerTimestamp } from './checker.ts';
export {
  currencyNetwork,
  providerSignatureOf,
  validateCurrency,
  validateCurrencyListResponse,
  validatePair,
  validatePairListResponse,
  validateQuoteResponse,
  validateStatusResponse,
  validateSwapResponse,
} from './validate.ts';
export * from './types.ts';
