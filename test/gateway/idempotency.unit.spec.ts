import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  idempotencyDecision,
  requestFingerprint,
  type IdempotencyRecord,
} from '../../src/gateway/idempotency.ts';

const body = {
  providerId: 'p',
  tradeMethod: 'float',
  from: 'btc',
  to: 'eth',
  amount: '0.1',
  payoutAddress: '0xabc',
  refundAddress: 'bc1q',
  nonce: 'aa'.repeat(32),
};

describe('request fingerprint', () => {
  it('does not depend on key order, nor on null or absent members', () => {
    const shuffled = Object.fromEntries(Object.entries(body).reverse());
    expect(requestFingerprint('p', shuffled)).toBe(requestFingerprint('p', body));
    expect(requestFingerprint('p', { ...body, slippage: null, quoteRef: undefined })).toBe(
      requestFingerprint('p', body),
    );
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[2,{"y":1}]},"b":1}',
    );
  });

  it('changes with any field, with the provider, and with the amount as written', () => {
    const base = requestFingerprint('p', body);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    for (const [k, v] of Object.entries({
      amount: '0.2',
      nonce: 'bb'.repeat(32),
      payoutAddress: '0xdef',
      slippage: '0.01',
    }))
      expect(requestFingerprint('p', { ...body, [k]: v })).not.toBe(base);
    expect(requestFingerprint('q', { ...body, providerId: 'q' })).not.toBe(base);
    expect(requestFingerprint('p', { ...body, amount: '0.10' })).not.toBe(base);
  });
});

describe('idempotency decision', () => {
  const record = (over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    key: 'k',
    providerId: 'p',
    fingerprint: 'f'.repeat(64),
    requestId: 'r1',
    state: 'completed',
    responseStatus: 201,
    response: { swapId: 's' },
    createdAt: new Date('2026-11-23T10:00:00Z'),
    ...over,
  });
  const lease = { nowMs: Date.parse('2026-11-23T10:00:30Z'), leaseMs: 60_000 };

  it('new key: go ahead', () => {
    expect(idempotencyDecision(undefined, 'f'.repeat(64), lease)).toEqual({ kind: 'new' });
  });

  it('same key and request, completed: the stored answer again', () => {
    expect(idempotencyDecision(record(), 'f'.repeat(64), lease)).toEqual({
      kind: 'replay',
      requestId: 'r1',
      status: 201,
      body: { swapId: 's' },
    });
  });

  it('same key and request, in flight: in progress', () => {
    expect(
      idempotencyDecision(
        record({ state: 'in_progress', responseStatus: null, response: null }),
        'f'.repeat(64),
        lease,
      ),
    ).toEqual({
      kind: 'in_progress',
      requestId: 'r1',
    });
  });

  it('same key and request, in flight beyond the lease: lease expired, with its age', () => {
    const inFlight = record({ state: 'in_progress', responseStatus: null, response: null });
    expect(idempotencyDecision(inFlight, 'f'.repeat(64), { ...lease, leaseMs: 30_000 }).kind).toBe(
      'in_progress',
    );
    expect(idempotencyDecision(inFlight, 'f'.repeat(64), { ...lease, leaseMs: 29_999 })).toEqual({
      kind: 'lease_expired',
      requestId: 'r1',
      ageMs: 30_000,
    });
    // A completed key is replayed whatever its age.
    expect(idempotencyDecision(record(), 'f'.repeat(64), { ...lease, leaseMs: 1 }).kind).toBe('replay');
  });

  it('same key, another request: mismatch, whatever the state', () => {
    expect(idempotencyDecision(record(), 'e'.repeat(64), lease).kind).toBe('mismatch');
    expect(idempotencyDecision(record({ state: 'in_progress' }), 'e'.repeat(64), lease).kind).toBe(
      'mismatch',
    );
  });
});
