import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONCILIATION_POLICY, reconcileSwap } from '../../src/reconciler/index.ts';
import { BASE_CREATION, input, named, type Change } from './support.ts';

/**
 * The webhook's networkFees ("referral or extra fee") read by evidence, against the referral fee the partner
 * committed to (BASE_CREATION's referralFees 0.0005): equal is the referral fee, above is the referral fee plus
 * an extra fee, below is a referral cut. Before the confirming poll the swap has no referralFees of its own.
 */
const run = (change: Change) => reconcileSwap(input(change), DEFAULT_RECONCILIATION_POLICY);
const webhook = (networkFees: string | null, change: Change = {}): Change => ({
  ...change,
  final: { referralFees: null, webhookNetworkFees: networkFees, ...change.final },
});
const noCreationReferral = { fees: { ...BASE_CREATION.fees, referralFees: null } };

describe("the webhook's networkFees read by evidence", () => {
  it('equal to the creation referral fee: it is the referral fee, the swap MATCHED', () => {
    const result = run(webhook('0.0005'));
    expect(named(result, 'fee.referral')).toMatchObject({ verdict: 'MATCHED', actual: '0.0005' });
    expect(named(result, 'fee.extra')).toMatchObject({ verdict: 'MATCHED', actual: '0' });
    expect(named(result, 'fee.extra').detail).toContain("equals the creation's referralFees 0.0005");
    expect(named(result, 'fee.sum').verdict).toBe('MATCHED');
    expect(result.verdict).toBe('MATCHED');
  });

  it('above: the referral fee plus an extra fee, the extra part a fee.extra MISMATCH', () => {
    const result = run(webhook('0.0008'));
    expect(named(result, 'fee.extra')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0',
      actual: '0.0003',
    });
    expect(named(result, 'fee.referral')).toMatchObject({ verdict: 'MATCHED', actual: '0.0005' });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('below: a referral cut, a fee.referral MISMATCH (the disfavour), no extra fee', () => {
    const result = run(webhook('0.0002'));
    expect(named(result, 'fee.referral')).toMatchObject({ verdict: 'MISMATCH', actual: '0.0002' });
    expect(named(result, 'fee.referral').detail).toContain('below');
    expect(named(result, 'fee.extra')).toMatchObject({ verdict: 'MATCHED', actual: '0' });
  });

  it('absent: no extra fee (NOT_APPLICABLE) and the referral fee awaits its confirmation', () => {
    const result = run(webhook(null));
    expect(named(result, 'fee.extra').verdict).toBe('NOT_APPLICABLE');
    expect(named(result, 'fee.referral').verdict).toBe('UNVERIFIABLE');
  });

  it('a referral fee known only from the quote', () => {
    const change = webhook('0.0008', {
      creation: noCreationReferral,
      quote: { amountFrom: '0.05', referralFees: '0.0005' },
    });
    const extra = named(run(change), 'fee.extra');
    expect(extra).toMatchObject({ verdict: 'MISMATCH', actual: '0.0003' });
    expect(extra.detail).toContain("the quote's referralFees 0.0005");
  });

  it('a referral fee known only from the creation', () => {
    const extra = named(run(webhook('0.0005', { quote: null })), 'fee.extra');
    expect(extra).toMatchObject({ verdict: 'MATCHED', actual: '0' });
    expect(extra.detail).toContain("the creation's referralFees");
  });

  it('a referral fee known only from a confirmed referralFees', () => {
    const change = webhook('0.0007', {
      creation: noCreationReferral,
      quote: null,
      final: { referralFees: '0.0005' },
    });
    const extra = named(run(change), 'fee.extra');
    expect(extra).toMatchObject({ verdict: 'MISMATCH', actual: '0.0002' });
    expect(extra.detail).toContain('the confirmed referralFees 0.0005');
  });

  it('below a confirmed referralFees: the lower figure is judged, never the larger', () => {
    const result = run(webhook('0.0003', { final: { referralFees: '0.0005' } }));
    expect(named(result, 'fee.referral')).toMatchObject({ verdict: 'MISMATCH', actual: '0.0003' });
  });

  it('no referral fee known at all: the extra fee cannot be read, UNVERIFIABLE', () => {
    const extra = named(run(webhook('0.0005', { creation: noCreationReferral, quote: null })), 'fee.extra');
    expect(extra.verdict).toBe('UNVERIFIABLE');
    expect(extra.detail).toContain('no referral fee is known');
  });

  it('more decimals than the currency has: UNVERIFIABLE, never rounded', () => {
    const extra = named(run(webhook('0.0005000000000000001')), 'fee.extra');
    expect(extra.verdict).toBe('UNVERIFIABLE');
  });

  it("a provider's override: extra (extraFees) and referral (referralFees) are judged as recorded", () => {
    expect(named(run({ final: { extraFees: '0.0005' } }), 'fee.extra').verdict).toBe('MISMATCH');
    const referral = run({ final: { referralFees: '0.0005', extraFees: null } });
    expect(named(referral, 'fee.extra').verdict).toBe('NOT_APPLICABLE');
    expect(named(referral, 'fee.referral').verdict).toBe('MATCHED');
  });
});
