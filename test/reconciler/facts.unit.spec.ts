import { describe, expect, it } from 'vitest';
import type { SwapCreated } from '../../src/events/types.ts';
import type { PartnerKey } from '../../src/payload/index.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  creationFactsFromSwapCreated,
  finalReportFromSwapRow,
  inspectAndReconcile,
  inspectionInputFor,
  type FinalReport,
  type SwapCreationFacts,
} from '../../src/reconciler/index.ts';
import { KEYS, NONCE, SIGNED, TAMPERED_PAYLOAD, VECTOR } from '../fixtures/payload/vectors.ts';
import { named } from './support.ts';

const vectorKey: PartnerKey = {
  keyId: 'vector',
  curve: 'secp256k1',
  publicKey: VECTOR.publicKey,
  validFrom: '2026-01-01T00:00:00Z',
};
const k1Key: PartnerKey = {
  keyId: 'k1',
  curve: 'secp256k1',
  publicKey: KEYS.k1Hex,
  validFrom: '2026-11-01T00:00:00Z',
};

// The public vector's swap: 0.0000115 BTC (1150 sat) to 0.000006 BAT (6000000000000 atomic, 18 decimals).
const vectorCreation: SwapCreationFacts = {
  tradeMethod: 'float',
  request: {
    payloadCurrencyFrom: 'BTC',
    payloadCurrencyTo: 'BAT',
    nonce: VECTOR.fields.device_transaction_id_ng,
    payoutAddress: VECTOR.fields.payout_address,
    refundAddress: VECTOR.fields.refund_address,
    amountFrom: '0.0000115',
    slippage: null,
  },
  quote: null,
  payinAddress: VECTOR.fields.payin_address,
  createdAt: '2026-11-22T12:20:00Z',
  fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: '0.0000001' },
  providerSig: { payload: VECTOR.payload, signature: VECTOR.signature, field: 'signature' },
};
const vectorFinal: FinalReport = {
  status: 'FINISHED',
  final: true,
  amount: '0.0000059',
  providerFees: '0',
  referralFees: '0',
  payoutNetworkFees: '0.0000001',
  payinTransactionId: 'a1',
  payoutTransactionId: '0xb2',
};

describe('inspectAndReconcile with real signatures', () => {
  it('the public vector, finished as signed: MATCHED', async () => {
    const result = await inspectAndReconcile(
      { creation: vectorCreation, final: vectorFinal },
      [vectorKey],
      DEFAULT_RECONCILIATION_POLICY,
    );
    // Only what does not apply to a FINISHED swap without a recorded quote or an extra fee is not MATCHED.
    expect(result.checks.filter((c) => c.verdict !== 'MATCHED' && c.verdict !== 'NOT_APPLICABLE')).toEqual(
      [],
    );
    expect(result.verdict).toBe('MATCHED');
    expect(named(result, 'signature.valid').actual).toBe('verified by key vector');
    // User side: 0.000006 signed − 0.0000001 network fee estimate; partner side: amount + fee.
    expect(named(result, 'amount.to_wallet')).toMatchObject({
      expected: '0.0000059',
      actual: '0.0000059',
      delta: '0',
    });
    expect(named(result, 'amount.partner_side')).toMatchObject({
      expected: '0.000006',
      actual: '0.000006',
      delta: '0',
    });
    expect(named(result, 'payload.amount_to_provider')).toMatchObject({
      verdict: 'MATCHED',
      expected: '1150',
      actual: '1150',
    });
  });

  it('accepts the signature under payload_signature', async () => {
    const creation = {
      ...vectorCreation,
      providerSig: { ...vectorCreation.providerSig, field: 'payload_signature' },
    };
    const result = await inspectAndReconcile(
      { creation, final: vectorFinal },
      [vectorKey],
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(result, 'signature.field')).toMatchObject({
      verdict: 'MATCHED',
      actual: 'payload_signature',
    });
    expect(result.verdict).toBe('MATCHED');
  });

  it('no key valid at createdAt: signature and amount UNVERIFIABLE', async () => {
    const later = { ...vectorKey, validFrom: '2027-01-01T00:00:00Z' };
    const result = await inspectAndReconcile(
      { creation: vectorCreation, final: vectorFinal },
      [later],
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(result, 'signature.valid').verdict).toBe('UNVERIFIABLE');
    expect(named(result, 'amount.to_wallet').verdict).toBe('UNVERIFIABLE');
    expect(result.verdict).toBe('UNVERIFIABLE');
  });

  it('a tampered payload: the signature is a MISMATCH, and the changed source amount too', async () => {
    const creation = {
      ...vectorCreation,
      providerSig: { ...vectorCreation.providerSig, payload: TAMPERED_PAYLOAD },
    };
    const result = await inspectAndReconcile(
      { creation, final: vectorFinal },
      [vectorKey],
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(result, 'signature.valid').verdict).toBe('MISMATCH');
    expect(named(result, 'payload.amount_to_provider')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '1150',
      actual: '1151',
    });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('a signed amount_to_wallet of 2^128 - 1 satoshi reconciles to the last satoshi', async () => {
    // SIGNED.bigAmounts: ETH -> BTC, amount_to_provider 2^64 + 1 wei, amount_to_wallet 2^128 - 1 sat.
    const creation: SwapCreationFacts = {
      tradeMethod: 'float',
      request: {
        payloadCurrencyFrom: 'ETH',
        payloadCurrencyTo: 'BTC',
        nonce: NONCE,
        payoutAddress: 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh',
        refundAddress: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY',
        refundAddressExtraId: '7007',
        amountFrom: '18.446744073709551617',
        slippage: '0',
      },
      quote: null,
      payinAddress: '0x1111111111111111111111111111111111111111',
      createdAt: '2026-11-22T12:20:00Z',
      fees: { providerFees: '0.01', referralFees: '0', payoutNetworkFees: '0.0001' },
      providerSig: { ...SIGNED.bigAmounts, field: 'signature' },
    };
    const final: FinalReport = {
      ...vectorFinal,
      amount: '3402823669209384634633746074317.68201455',
      providerFees: '0.01',
      payoutNetworkFees: '0.0001',
    };
    const result = await inspectAndReconcile({ creation, final }, [k1Key], DEFAULT_RECONCILIATION_POLICY);
    expect(named(result, 'amount.to_wallet')).toMatchObject({
      verdict: 'MATCHED',
      expected: '3402823669209384634633746074317.68201455',
      actual: '3402823669209384634633746074317.68201455',
    });
    expect(named(result, 'amount.partner_side')).toMatchObject({
      verdict: 'MATCHED',
      expected: '3402823669209384634633746074317.68211455',
      actual: '3402823669209384634633746074317.68211455',
    });
    expect(named(result, 'payload.amount_to_provider')).toMatchObject({
      verdict: 'MATCHED',
      expected: '18446744073709551617',
    });
    expect(result.verdict).toBe('MATCHED');

    const oneSatShort = await inspectAndReconcile(
      { creation, final: { ...final, amount: '3402823669209384634633746074317.68201454' } },
      [k1Key],
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(oneSatShort, 'amount.to_wallet')).toMatchObject({
      verdict: 'MISMATCH',
      delta: '-0.00000001',
    });
  });
});

describe('facts from events and rows', () => {
  it('reads the creation facts of a SwapCreated event', () => {
    const event: SwapCreated = {
      requestId: 'req-1',
      request: {
        tradeMethod: 'fixed',
        quoteRef: 'qr-1',
        quoteId: 'q-1',
        amountFrom: null,
        currencyFrom: 'btc',
        currencyTo: 'eth',
        payloadCurrencyFrom: 'BTC',
        payloadCurrencyTo: 'ETH',
        payoutAddress: '0xpayout',
        payoutAddressExtraId: null,
        refundAddress: 'bc1refund',
        refundAddressExtraId: 'memo',
        nonce: NONCE,
        slippage: '0.005',
      },
      quote: {
        quoteRef: 'qr-1',
        quoteId: 'q-1',
        tradeMethod: 'fixed',
        currencyFrom: 'btc',
        currencyTo: 'eth',
        amountFrom: '0.05',
        amountTo: '1.2',
        providerFees: '0.001',
        referralFees: '0',
        payoutNetworkFees: '0.0004',
        expiry: null,
        defaultSlippage: '0.01',
        minSlippage: null,
        maxSlippage: null,
        extraFieldsJson: null,
      },
      payinAddress: 'bc1payin',
      createdAt: '2026-11-22T12:20:00.000Z',
      providerFees: '0.001',
      referralFees: '0',
      payoutNetworkFees: '0.0004',
      providerSigPayload: 'cGF5bG9hZA',
      providerSigSignature: 'c2ln',
      providerSigField: 'payload_signature',
      signatureValid: true,
      keyId: 'k1',
      decodedPayloadJson: null,
      signedAmountToProvider: '5000000',
      signedAmountToWallet: '1200400000000000000',
      findings: [],
      extraFieldsJson: null,
    };
    const creation = creationFactsFromSwapCreated(event);
    expect(creation).toEqual({
      tradeMethod: 'fixed',
      request: {
        payloadCurrencyFrom: 'BTC',
        payloadCurrencyTo: 'ETH',
        nonce: NONCE,
        payoutAddress: '0xpayout',
        payoutAddressExtraId: null,
        refundAddress: 'bc1refund',
        refundAddressExtraId: 'memo',
        amountFrom: null,
        slippage: '0.005',
      },
      quote: {
        amountFrom: '0.05',
        defaultSlippage: '0.01',
        tradeMethod: 'fixed',
        amountTo: '1.2',
        providerFees: '0.001',
        referralFees: '0',
        payoutNetworkFees: '0.0004',
      },
      payinAddress: 'bc1payin',
      createdAt: '2026-11-22T12:20:00.000Z',
      fees: { providerFees: '0.001', referralFees: '0', payoutNetworkFees: '0.0004' },
      providerSig: { payload: 'cGF5bG9hZA', signature: 'c2ln', field: 'payload_signature' },
    });
    const inspectInput = inspectionInputFor(creation, [k1Key]);
    expect(inspectInput.providerSig).toEqual({ payload: 'cGF5bG9hZA', payload_signature: 'c2ln' });
    expect(inspectInput.quote).toEqual({ amount: '0.05' });
    expect(inspectInput.response).toEqual({ payinAddress: 'bc1payin' });
    expect(inspectInput.request.refundAddressExtraId).toBe('memo');
    expect(inspectInput.createdAt).toBe('2026-11-22T12:20:00.000Z');
  });

  it('reads the final report of a swaps row', () => {
    expect(
      finalReportFromSwapRow({
        status: 'FINISHED',
        final: true,
        amountTo: '1.2',
        providerFees: '0.001',
        referralFees: null,
        payoutNetworkFees: '0.0004',
        payinTransactionId: 'h1',
        payoutTransactionId: null,
      }),
    ).toEqual({
      status: 'FINISHED',
      final: true,
      amount: '1.2',
      providerFees: '0.001',
      referralFees: null,
      payoutNetworkFees: '0.0004',
      payinTransactionId: 'h1',
      payoutTransactionId: null,
      refundTransactionId: null,
      statusClass: null,
      extraFees: null,
      webhookNetworkFees: null,
    });
  });

  it('reads the refund hash of a swaps row when the row has one', () => {
    expect(
      finalReportFromSwapRow({
        status: 'REFUNDED',
        final: true,
        amountTo: null,
        providerFees: '0',
        referralFees: '0',
        payoutNetworkFees: '0',
        payinTransactionId: 'h1',
        payoutTransactionId: null,
        refundTransactionId: 'r1',
      }).refundTransactionId,
    ).toBe('r1');
  });
});
