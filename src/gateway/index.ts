// The gateway API of the wallet backend: catalog, quotes, swaps (README, "Gateway API").
export { blockingFindings, quoteTerms, swapCreatedEvent } from './events.ts';
export {
  canonicalJson,
  idempotencyDecision,
  requestFingerprint,
  type IdempotencyDecision,
  type IdempotencyRecord,
} from './idempotency.ts';
export { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
export {
  checkQuoteForSwap,
  checkSlippage,
  checkSwapShape,
  type Refusal,
  type StoredQuote,
  type SwapBody,
} from './rules.ts';
export { buildGatewayServer, walletKeyIndex, type GatewayServerDeps } from './server.ts';
export { GatewayService, partnerFailure, type Answer, type QuoteBody } from './service.ts';
export { GatewayConfigError, startGateway, type GatewayConfig, type RunningGateway } from './run.ts';
