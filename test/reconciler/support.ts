// Hand-built reconciliation inputs: a fixed BTC -> ETH swap whose partner signed 1.234567890123456789
// ETH to the wallet (payout network fee 0.00042 included) and reported it exactly at FINISHED.
import type { DecodedSwapPayload, Finding, PayloadInspection } from '../../src/payload/index.ts';
import type {
  FinalReport,
  ReconciledCheck,
  ReconciliationInput,
  ReconciliationQuote,
  ReconciliationRequest,
  ReconciliationResult,
  SwapCreationFacts,
} from '../../src/reconciler/index.ts';
import type { DecimalsLookup } from '../../src/money/index.ts';
import type { StatusConflict } from '../../src/reconciler/types.ts';

export const NONCE = 'a3f1c2d4e5b60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00';

export const BASE_REQUEST: ReconciliationRequest = {
  payloadCurrencyFrom: 'BTC',
  payloadCurrencyTo: 'ETH',
  nonce: NONCE,
  payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
  refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf4teq',
  amountFrom: null,
  slippage: null,
};

export const BASE_CREATION: SwapCreationFacts = {
  tradeMethod: 'fixed',
  request: BASE_REQUEST,
  quote: { amountFrom: '0.05', defaultSlippage: null },
  payinAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  createdAt: '2026-11-22T12:20:00Z',
  fees: { providerFees: '0.0015', referralFees: '0.0005', payoutNetworkFees: '0.00042' },
  providerSig: { payload: 'unused-by-the-pure-checks', signature: 'unused', field: 'signature' },
};

export const BASE_FINAL: FinalReport = {
  status: 'FINISHED',
  final: true,
  // 1.234567890123456789 signed - 0.00042 payout network fee
  amount: '1.234147890123456789',
  providerFees: '0.0015',
  referralFees: '0.0005',
  payoutNetworkFees: '0.00042',
  payinTransactionId: 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16',
  payoutTransactionId: '0x9fc76417374aa880d4449a1f7f31ec597f00b1f6f3dd2d66f4c9c6c445836d8b',
};

export function decodedPayload(change: Partial<DecodedSwapPayload> = {}): DecodedSwapPayload {
  return {
    payin_address: BASE_CREATION.payinAddress,
    payin_extra_id: '',
    refund_address: BASE_REQUEST.refundAddress,
    refund_extra_id: '',
    payout_address: BASE_REQUEST.payoutAddress,
    payout_extra_id: '',
    currency_from: 'BTC',
    currency_to: 'ETH',
    amount_to_provider: 5000000n,
    amount_to_wallet: 1234567890123456789n,
    device_transaction_id: '',
    device_transaction_id_ng: new Uint8Array(Buffer.from(NONCE, 'hex')),
    payin_extra_data: new Uint8Array(),
    amount_to_provider_bytes: new Uint8Array([0x4c, 0x4b, 0x40]),
    amount_to_wallet_bytes: new Uint8Array(),
    ...change,
  };
}

export const OK_FINDINGS: Finding[] = [
  {
    check: 'signature.key_window',
    outcome: 'ok',
    expected: 'a key valid at 2026-11-22T12:20:00Z',
    actual: 'k1',
  },
  { check: 'signature.field', outcome: 'ok', actual: 'signature' },
  { check: 'signature.encoding', outcome: 'ok', actual: '64 bytes R‖S' },
  { check: 'signature.key', outcome: 'ok', actual: 'secp256k1 (ES256K)' },
  { check: 'signature.verify', outcome: 'ok', actual: 'verifies' },
  { check: 'payload.decode', outcome: 'ok' },
  { check: 'payload.currency_from', outcome: 'ok', expected: 'BTC', actual: 'BTC' },
  { check: 'payload.currency_to', outcome: 'ok', expected: 'ETH', actual: 'ETH' },
];

export function inspection(change: Partial<PayloadInspection> = {}): PayloadInspection {
  return { decoded: decodedPayload(), signatureValid: true, keyId: 'k1', findings: OK_FINDINGS, ...change };
}

export interface Change {
  creation?: Partial<SwapCreationFacts>;
  request?: Partial<ReconciliationRequest>;
  quote?: ReconciliationQuote | null;
  final?: Partial<FinalReport>;
  decoded?: Partial<DecodedSwapPayload>;
  inspection?: Partial<PayloadInspection>;
  magnitudes?: DecimalsLookup;
  providerDefaultSlippage?: string | null;
  conflicts?: StatusConflict[] | null;
}

export function input(change: Change = {}): ReconciliationInput {
  return {
    creation: {
      ...BASE_CREATION,
      ...(change.quote !== undefined ? { quote: change.quote } : {}),
      ...change.creation,
      request: { ...BASE_REQUEST, ...change.request },
    },
    final: { ...BASE_FINAL, ...change.final },
    inspection: inspection({ decoded: decodedPayload(change.decoded), ...change.inspection }),
    ...(change.magnitudes ? { magnitudes: change.magnitudes } : {}),
    ...(change.providerDefaultSlippage !== undefined
      ? { providerDefaultSlippage: change.providerDefaultSlippage }
      : {}),
    ...(change.conflicts !== undefined ? { conflicts: change.conflicts } : {}),
  };
}

export function named(result: ReconciliationResult, name: string): ReconciledCheck {
  const found = result.checks.filter((c) => c.name === name);
  if (found.length !== 1) throw new Error(`expected one check ${name}, found ${found.length}`);
  return found[0]!;
}
