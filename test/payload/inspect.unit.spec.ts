import { describe, expect, it } from 'vitest';
import {
  inspectSwapPayload,
  type InspectSwapPayloadInput,
  type PartnerKey,
} from '../../src/payload/index.ts';
import { KEYS, OVER_VECTOR, TAMPERED_PAYLOAD, VECTOR, VECTOR_SWAP } from '../fixtures/payload/vectors.ts';

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

const input = (change: Partial<InspectSwapPayloadInput> = {}): InspectSwapPayloadInput => ({
  providerSig: VECTOR_SWAP.response.providerSig,
  request: VECTOR_SWAP.floatRequest,
  response: VECTOR_SWAP.response,
  tradeMethod: 'float',
  keys: [vectorKey],
  createdAt: VECTOR_SWAP.response.createdAt,
  ...change,
});
const problems = (i: { findings: { outcome: string }[] }) => i.findings.filter((f) => f.outcome !== 'ok');

describe('inspectSwapPayload', () => {
  it('accepts the public vector against its swap: valid, decoded, every check ok and in order', async () => {
    const inspection = await inspectSwapPayload(input());
    expect(inspection.signatureValid).toBe(true);
    expect(inspection.keyId).toBe('vector');
    expect(inspection.decoded?.amount_to_wallet).toBe(6000000000000n);
    expect(problems(inspection)).toEqual([]);
    expect(inspection.findings.map((f) => f.check)).toEqual([
      'signature.key_window',
      'signature.field',
      'signature.encoding',
      'signature.key',
      'signature.verify',
      'payload.decode',
      'device.device_transaction_id_ng.length',
      'device.amount_to_provider.length',
      'device.amount_to_provider.nonzero',
      'device.amount_to_wallet.length',
      'device.amount_to_wallet.nonzero',
      'device.payin_extra.exclusive',
      'device.payin_extra_data.length',
      'payload.currency_from',
      'payload.currency_to',
      'payload.device_transaction_id_ng',
      'payload.payout_address',
      'payload.payout_extra_id',
      'payload.refund_address',
      'payload.refund_extra_id',
      'payload.payin_address',
      'payload.amount_to_provider',
    ]);
  });

  it('accepts a fixed swap, and payload_signature naming', async () => {
    const inspection = await inspectSwapPayload(
      input({
        providerSig: { payload: VECTOR.payload, payload_signature: VECTOR.signature },
        request: VECTOR_SWAP.fixedRequest,
        quote: VECTOR_SWAP.quote,
        tradeMethod: 'fixed',
      }),
    );
    expect(inspection.signatureValid).toBe(true);
    expect(problems(inspection)).toEqual([]);
  });

  it('tries the overlapping keys newest first and reports the one that verifies', async () => {
    const inspection = await inspectSwapPayload(input({ keys: [vectorKey, k1Key] }));
    expect(inspection.signatureValid).toBe(true);
    expect(inspection.keyId).toBe('vector');
    expect(inspection.findings[0]).toMatchObject({
      check: 'signature.key_window',
      outcome: 'ok',
      actual: 'k1, vector',
    });
    const byK1 = await inspectSwapPayload(
      input({
        keys: [vectorKey, k1Key],
        providerSig: { payload: VECTOR.payload, signature: OVER_VECTOR.k1Valid },
      }),
    );
    expect(byK1.keyId).toBe('k1');
  });

  it('does not use a key outside its window', async () => {
    const retired: PartnerKey = { ...vectorKey, validTo: '2026-06-01T00:00:00Z' };
    const inspection = await inspectSwapPayload(input({ keys: [retired, k1Key] }));
    expect(inspection.signatureValid).toBe(false);
    expect(inspection.keyId).toBeUndefined();
    expect(problems(inspection)).toEqual([
      expect.objectContaining({ check: 'signature.verify', outcome: 'violation' }),
    ]);
  });

  it('reports a swap created before any key as unverifiable, still decoding and checking the payload', async () => {
    const inspection = await inspectSwapPayload(input({ createdAt: '2025-12-31T23:59:59Z' }));
    expect(inspection.signatureValid).toBe(false);
    expect(problems(inspection)).toEqual([
      {
        check: 'signature.key_window',
        outcome: 'unverifiable',
        expected: 'a key valid at 2025-12-31T23:59:59Z',
        actual: 'none',
        detail: '1 key(s) configured, none valid at that time',
      },
    ]);
    expect(inspection.decoded?.currency_from).toBe('BTC');
  });

  it('reports a malformed createdAt as unverifiable', async () => {
    const inspection = await inspectSwapPayload(input({ createdAt: 'last tuesday' }));
    expect(inspection.signatureValid).toBe(false);
    expect(inspection.findings[0]).toMatchObject({
      check: 'signature.key_window',
      outcome: 'unverifiable',
      detail: expect.stringMatching(/not an ISO-8601/),
    });
  });

  it('says every candidate key failed when none verifies a tampered payload', async () => {
    const inspection = await inspectSwapPayload(
      input({
        keys: [vectorKey, k1Key],
        providerSig: { payload: TAMPERED_PAYLOAD, signature: VECTOR.signature },
      }),
    );
    expect(inspection.signatureValid).toBe(false);
    expect(problems(inspection)).toEqual([
      expect.objectContaining({ check: 'signature.verify', outcome: 'violation' }),
      {
        check: 'signature.key_rotation',
        outcome: 'violation',
        detail: 'tried k1, vector; none verifies (findings above are for k1)',
      },
      expect.objectContaining({
        check: 'payload.amount_to_provider',
        outcome: 'mismatch',
        expected: '1150',
        actual: '1151',
      }),
    ]);
  });

  it('reports an undecodable payload without throwing', async () => {
    const inspection = await inspectSwapPayload(
      input({ providerSig: { payload: 'CAE', signature: VECTOR.signature } }),
    );
    expect(inspection.signatureValid).toBe(false);
    expect(inspection.decoded).toBeUndefined();
    expect(inspection.findings.find((f) => f.check === 'payload.decode')).toMatchObject({
      outcome: 'violation',
      detail: expect.stringMatching(/wire type/),
    });
    expect(inspection.findings.some((f) => f.check.startsWith('device.'))).toBe(false);
  });

  it('passes the magnitudes through to the amount check', async () => {
    const inspection = await inspectSwapPayload(input({ magnitudes: () => undefined }));
    expect(problems(inspection)).toEqual([
      expect.objectContaining({ check: 'payload.amount_to_provider', outcome: 'unverifiable' }),
    ]);
  });
});
