// Public surface of the signed swap payload: decode, verify, check, inspect. Internals stay unexported.
export type { Finding, FindingOutcome } from './findings.ts';
export { isProblem } from './findings.ts';
export {
  decodeSwapPayload,
  describeSwapPayload,
  deviceRuleFindings,
  PayloadDecodeError,
  type DecodedSwapPayload,
  type PayloadDecodeFailure,
} from './decode.ts';
export { verifyProviderSig, type ProviderSig, type SignatureVerdict } from './verify.ts';
export {
  checkPayloadAgainstSwap,
  type SwapContext,
  type SwapRequestFields,
  type SwapResponseFields,
  type QuoteFields,
  type TradeMethod,
} from './check.ts';
export {
  CURVES,
  importVerificationKey,
  keysValidAt,
  selectKeyAt,
  parsePartnerKeys,
  KeyImportError,
  KeyRegistryError,
  type Curve,
  type PartnerKey,
  type PartnerKeyRegistry,
  type PublicKeyInput,
  type VerificationKey,
} from './keys.ts';
export { inspectSwapPayload, type InspectSwapPayloadInput, type PayloadInspection } from './inspect.ts';
