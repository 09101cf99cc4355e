export { startPartnerSimulator } from './server.ts';
export { seededRandom } from './random.ts';
export { offsetTimestamp } from './pricing.ts';
export { DEFAULT_RANDOM_PATHS } from './progression.ts';
export type {
  PartnerSimulator,
  PartnerSimulatorOptions,
  SimSwapView,
  SimCall,
  StatusLike,
  StatusOverrides,
  StatusStep,
  WebhookDelivery,
  SimChain,
  ChainMove,
} from './types.ts';

export {
  CALL_FAULT_KINDS,
  PAYLOAD_FAULTS,
  FINAL_STATUS_FAULTS,
  CHAIN_FAULTS,
  WEBHOOK_FAULTS,
  SWAP_FAULTS,
  isPayloadFault,
  isFinalStatusFault,
  isChainFault,
  type CallFault,
  type ChainFault,
  type CallFaultKind,
  type FinalStatusFault,
  type InjectOptions,
  type MalformedVariant,
  type PayloadFault,
  type SwapFault,
  type WebhookFault,
} from './faults.ts';
export {
  PayloadSigner,
  SIMULATOR_CURVES,
  bigintToBytes,
  encodeSwapPayload,
  toPaddedBase64url,
  type SimulatorCurve,
  type SimulatorPublicKey,
  type SwapPayloadFields,
} from './signer.ts';
export {
  DEFAULT_CURRENCIES,
  DEFAULT_PAIRS,
  wireCurrency,
  wirePair,
  type SimCurrency,
  type SimPair,
} from './catalog.ts';
