// Swaps whose creation carries the public test vector's signed payload (docs/architecture.md: secp256k1,
// BTC -> BAT, 1150 sat in, 6e12 atomic BAT out), for the worker's tests and the reconciler benchmark: every
// one verifies against VECTOR.publicKey, so the checks run the real signature path.
import { VECTOR } from '../fixtures/payload/vectors.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';

export { VECTOR };

/** The provider file entry of a partner that signs with the vector's key. */
export const vectorProviderYaml = (providerId: string) => `providers:
  - id: ${providerId}
    client: { baseUrl: 'http://127.0.0.1:9' }
    webhookKeys: []
    payloadKeys:
      - { keyId: vector, curve: secp256k1, publicKey: '${VECTOR.publicKey}', validFrom: '2025-01-01T00:00:00Z' }
`;

/** A SwapCreated whose request matches the vector's payload: 1150 sat in, 6e12 atomic BAT (0.000006) out. */
export function vectorSwap(swapId: string, providerId: string) {
  return swapCreated(swapId, {
    providerId,
    time: '2026-06-01T00:00:00.000Z',
    request: {
      tradeMethod: 'float',
      amountFrom: '0.0000115',
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: 'BAT',
      payoutAddress: VECTOR.fields.payout_address,
      refundAddress: VECTOR.fields.refund_address,
      nonce: VECTOR.fields.device_transaction_id_ng,
      slippage: '0.01',
    },
    created: {
      payinAddress: VECTOR.fields.payin_address,
      providerSigPayload: VECTOR.payload,
      providerSigSignature: VECTOR.signature,
      providerFees: '0.0000001',
      referralFees: '0.00000005',
      payoutNetworkFees: '0.000001',
      signedAmountToProvider: '1150',
      signedAmountToWallet: '6000000000000',
    },
  });
}

/** The swap's FINISHED report with the vector's fees; `amount` is what the wallet got. */
export const finished = (swapId: string, providerId: string, amount: string) =>
  statusReported(
    swapId,
    'FINISHED',
    {
      amount,
      providerFees: '0.0000001',
      referralFees: '0.00000005',
      payoutNetworkFees: '0.000001',
      payinTransactionId: 'in',
      payoutTransactionId: 'out',
    },
    { providerId },
  );
