// Every outcome judged on its own evidence (DESIGN "Reconciliation rules"): REFUNDED and EXPIRED swaps were
// always UNVERIFIABLE before (issue 34, finding 1); each case here failed then.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONCILIATION_POLICY, reconcileSwap } from '../../src/reconciler/index.ts';
import { input, named, type Change } from './support.ts';

const run = (change: Change = {}) => reconcileSwap(input(change), DEFAULT_RECONCILIATION_POLICY);
const counted = (change: Change) =>
  run(change)
    .checks.filter((c) => c.verdict !== 'MATCHED' && c.verdict !== 'NOT_APPLICABLE')
    .map((c) => `${c.name}=${c.verdict}`);

const REFUND: Change['final'] = {
  status: 'REFUNDED',
  final: true,
  statusClass: 'final',
  amount: null,
  payoutTransactionId: null,
  refundTransactionId: 'bc1q-refund-tx',
};
// A closed swap: EXPIRED is reopenable, not final, for a default provider.
const EXPIRY: Change['final'] = {
  status: 'EXPIRED',
  final: false,
  statusClass: 'closed',
  amount: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
};

describe('REFUNDED', () => {
  it('a textbook refund (payin, refund transaction, nothing to the user) is MATCHED', () => {
    const result = run({ final: REFUND });
    expect(counted({ final: REFUND })).toEqual([]);
    expect(result.verdict).toBe('MATCHED');
    expect(named(result, 'hash.refund')).toMatchObject({ verdict: 'MATCHED', actual: 'bc1q-refund-tx' });
    expect(named(result, 'amount.partner_side').verdict).toBe('NOT_APPLICABLE');
  });

  it('a refund with no refund transaction is UNVERIFIABLE "refund not evidenced", nothing else', () => {
    const final = { ...REFUND, refundTransactionId: null };
    expect(counted({ final })).toEqual(['hash.refund=UNVERIFIABLE']);
    expect(named(run({ final }), 'hash.refund').detail).toContain('refund not evidenced');
  });

  it('a "refund" that also paid the user 0.5 is a MISMATCH', () => {
    const final = { ...REFUND, amount: '0.5' };
    expect(counted({ final })).toEqual(['amount.to_wallet=MISMATCH']);
    expect(run({ final }).verdict).toBe('MISMATCH');
  });

  it('a refund with a payout to the user, or without a payin, is a MISMATCH', () => {
    expect(counted({ final: { ...REFUND, payoutTransactionId: '0xpayout' } })).toEqual([
      'hash.payout=MISMATCH',
    ]);
    expect(counted({ final: { ...REFUND, payinTransactionId: null } })).toEqual(['hash.payin=MISMATCH']);
  });
});

describe('EXPIRED (closed)', () => {
  it('a clean expiry (no payin, no payout, no amount) is MATCHED', () => {
    const result = run({ final: EXPIRY });
    expect(counted({ final: EXPIRY })).toEqual([]);
    expect(result.verdict).toBe('MATCHED');
    expect(named(result, 'status.final')).toMatchObject({ verdict: 'MATCHED', actual: 'EXPIRED (closed)' });
  });

  it('a deposit after expiry is a MISMATCH "money moved on an expired swap"', () => {
    const final = { ...EXPIRY, payinTransactionId: 'late-deposit' };
    expect(counted({ final })).toEqual(['hash.payin=MISMATCH']);
    expect(named(run({ final }), 'hash.payin').detail).toContain('money moved on an expired swap');
  });

  it('a payout, an amount or a refund on an expired swap is a MISMATCH', () => {
    expect(counted({ final: { ...EXPIRY, payoutTransactionId: '0xpaid' } })).toEqual([
      'hash.payout=MISMATCH',
    ]);
    expect(counted({ final: { ...EXPIRY, amount: '0.1' } })).toEqual(['amount.to_wallet=MISMATCH']);
    expect(counted({ final: { ...EXPIRY, refundTransactionId: 'r' } })).toEqual(['hash.refund=MISMATCH']);
  });

  it('a provider that lists EXPIRED as final gets the same rules', () => {
    expect(run({ final: { ...EXPIRY, final: true, statusClass: 'final' } }).verdict).toBe('MATCHED');
  });

  it('fees reported on an expiry are shown, never counted', () => {
    const result = run({ final: { ...EXPIRY, providerFees: '9' } });
    expect(named(result, 'fee.provider')).toMatchObject({ verdict: 'NOT_APPLICABLE', actual: '9' });
    expect(result.verdict).toBe('MATCHED');
  });
});

describe('NOT_APPLICABLE never counts', () => {
  it('a swap whose only non-MATCHED checks are NOT_APPLICABLE is MATCHED', () => {
    const result = run({ final: REFUND });
    expect(result.checks.some((c) => c.verdict === 'NOT_APPLICABLE')).toBe(true);
    expect(result.verdict).toBe('MATCHED');
  });

  it('an open swap is still UNVERIFIABLE (nothing has ended)', () => {
    expect(run({ final: { status: 'PENDING', final: false, statusClass: 'open' } }).verdict).toBe(
      'UNVERIFIABLE',
    );
  });
});

describe('figures never reported before the confirmation deadline', () => {
  it('a missing fee or hash says "never reported", not merely "not reported yet"', () => {
    const result = reconcileSwap(
      input({ final: { payoutNetworkFees: null, payoutTransactionId: null } }),
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(result, 'fee.payout_network').detail).not.toContain('never reported');
    const never = reconcileSwap(
      {
        ...input({ final: { payoutNetworkFees: null, payoutTransactionId: null } }),
        neverReported: ['payoutNetworkFees', 'payoutTransactionId'],
      },
      DEFAULT_RECONCILIATION_POLICY,
    );
    expect(named(never, 'fee.payout_network')).toMatchObject({ verdict: 'UNVERIFIABLE' });
    expect(named(never, 'fee.payout_network').detail).toContain(
      'payoutNetworkFees never reported: GET /status did not report it before the confirmation deadline',
    );
    expect(named(never, 'hash.payout').detail).toContain('payoutTransactionId never reported');
  });
});
