import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/index.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  parseReconciliationPolicy,
  reconcileSwap,
  type ReconciliationPolicy,
} from '../../src/reconciler/index.ts';
import {
  EXACT_BOTH_WAYS,
  EXACT_FEE,
  type DirectionalTolerance,
  type FeeCheckKind,
  type FeeTolerance,
} from '../../src/reconciler/policy.ts';
import { input, named, type Change } from './support.ts';

const tol = (absolute = '0', relative = '0'): FeeTolerance => ({
  absolute: new Decimal(absolute),
  relative: new Decimal(relative),
});
const policyWith = (
  fees: Partial<Record<FeeCheckKind, Partial<DirectionalTolerance>>> = {},
): ReconciliationPolicy => ({
  fees: {
    provider: { ...EXACT_BOTH_WAYS, ...fees.provider },
    referral: { ...EXACT_BOTH_WAYS, ...fees.referral },
    payoutNetwork: { ...EXACT_BOTH_WAYS, ...fees.payoutNetwork },
    sum: { ...EXACT_BOTH_WAYS, ...fees.sum },
  },
});
const run = (change: Change = {}, policy: ReconciliationPolicy = DEFAULT_RECONCILIATION_POLICY) =>
  reconcileSwap(input(change), policy);
const FEE_CHECKS = ['fee.provider', 'fee.referral', 'fee.payout_network', 'fee.sum'];

/**
 * Hand-computed at precisions 0, 6, 8 and 18, creation fees above 2^64 atomic units: provider
 * Fp = 2^64 + 10000, referral Fr = 2^64 + 2000, network Fn = 1200; sum 36893488147419116432 atomic.
 * Half the referral fee: 9223372036854776808 atomic. Figures are those numbers, decimal point moved.
 */
const PRECISIONS = [
  {
    decimals: 0,
    provider: '18446744073709561616',
    referral: '18446744073709553616',
    network: '1200',
    sum: '36893488147419116432',
    hundred: '100',
    hundredOne: '101',
    providerUp100: '18446744073709561716',
    providerUp101: '18446744073709561717',
    providerDown101: '18446744073709561515',
    referralDown100: '18446744073709553516',
    referralDown101: '18446744073709553515',
    referralUp101: '18446744073709553717',
    networkUp100: '1300',
    networkUp101: '1301',
    halfReferral: '9223372036854776808',
    providerPlusHalfReferral: '27670116110564338424',
    halfProvider: '9223372036854780808',
    excess: '1200.5',
  },
  {
    decimals: 6,
    provider: '18446744073709.561616',
    referral: '18446744073709.553616',
    network: '0.0012',
    sum: '36893488147419.116432',
    hundred: '0.0001',
    hundredOne: '0.000101',
    providerUp100: '18446744073709.561716',
    providerUp101: '18446744073709.561717',
    providerDown101: '18446744073709.561515',
    referralDown100: '18446744073709.553516',
    referralDown101: '18446744073709.553515',
    referralUp101: '18446744073709.553717',
    networkUp100: '0.0013',
    networkUp101: '0.001301',
    halfReferral: '9223372036854.776808',
    providerPlusHalfReferral: '27670116110564.338424',
    halfProvider: '9223372036854.780808',
    excess: '0.0012005',
  },
  {
    decimals: 8,
    provider: '184467440737.09561616',
    referral: '184467440737.09553616',
    network: '0.000012',
    sum: '368934881474.19116432',
    hundred: '0.000001',
    hundredOne: '0.00000101',
    providerUp100: '184467440737.09561716',
    providerUp101: '184467440737.09561717',
    providerDown101: '184467440737.09561515',
    referralDown100: '184467440737.09553516',
    referralDown101: '184467440737.09553515',
    referralUp101: '184467440737.09553717',
    networkUp100: '0.000013',
    networkUp101: '0.00001301',
    halfReferral: '92233720368.54776808',
    providerPlusHalfReferral: '276701161105.64338424',
    halfProvider: '92233720368.54780808',
    excess: '0.000012005',
  },
  {
    decimals: 18,
    provider: '18.446744073709561616',
    referral: '18.446744073709553616',
    network: '0.0000000000000012',
    sum: '36.893488147419116432',
    hundred: '0.0000000000000001',
    hundredOne: '0.000000000000000101',
    providerUp100: '18.446744073709561716',
    providerUp101: '18.446744073709561717',
    providerDown101: '18.446744073709561515',
    referralDown100: '18.446744073709553516',
    referralDown101: '18.446744073709553515',
    referralUp101: '18.446744073709553717',
    networkUp100: '0.0000000000000013',
    networkUp101: '0.000000000000001301',
    halfReferral: '9.223372036854776808',
    providerPlusHalfReferral: '27.670116110564338424',
    halfProvider: '9.223372036854780808',
    excess: '0.0000000000000012005',
  },
] as const;

describe.each(PRECISIONS)('directional fee checks at precision $decimals, above 2^64 atomic units', (p) => {
  const currency = `P${p.decimals}`;
  const fees = (final: { provider?: string; referral?: string; network?: string } = {}): Change => ({
    creation: { fees: { providerFees: p.provider, referralFees: p.referral, payoutNetworkFees: p.network } },
    request: { payloadCurrencyTo: currency },
    decoded: { currency_to: currency },
    final: {
      providerFees: final.provider ?? p.provider,
      referralFees: final.referral ?? p.referral,
      payoutNetworkFees: final.network ?? p.network,
    },
    magnitudes: (id) => (id === currency ? p.decimals : undefined),
  });
  const fee = (name: string, change: Change, policy?: ReconciliationPolicy) =>
    named(run(change, policy), name);
  const abs = (a: string) => tol(a, '0');

  it('equal fees: every fee check and the sum MATCHED', () => {
    const result = run(fees());
    for (const name of FEE_CHECKS) expect(named(result, name).verdict).toBe('MATCHED');
    expect(named(result, 'fee.sum')).toMatchObject({ expected: p.sum, actual: p.sum, delta: '0' });
  });

  it('provider fee up is the disfavour: 100 atomic within a 100 disfavour allowance, 101 beyond', () => {
    const policy = policyWith({
      provider: { disfavour: abs(p.hundred) },
      sum: { disfavour: abs(p.hundredOne) },
    });
    const within = fee('fee.provider', fees({ provider: p.providerUp100 }), policy);
    expect(within).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      expected: p.provider,
      actual: p.providerUp100,
      delta: p.hundred,
      tolerance: p.hundred,
    });
    expect(within.detail).toContain(`up ${p.hundred}, in the platform's disfavour`);
    const beyond = fee('fee.provider', fees({ provider: p.providerUp101 }), policy);
    expect(beyond).toMatchObject({ verdict: 'MISMATCH', delta: p.hundredOne, tolerance: p.hundred });
    expect(beyond.detail).toContain('beyond the disfavour tolerance');
    // The sum moved by the same 101 atomic: within its own disfavour allowance of 101.
    expect(fee('fee.sum', fees({ provider: p.providerUp101 }), policy)).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: p.hundredOne,
    });
  });

  it('provider fee down is the favour: judged by the favour tolerance only', () => {
    const disfavourOnly = policyWith({ provider: { disfavour: abs(p.hundredOne) } });
    expect(fee('fee.provider', fees({ provider: p.providerDown101 }), disfavourOnly)).toMatchObject({
      verdict: 'MISMATCH',
      delta: `-${p.hundredOne}`,
      tolerance: '0',
    });
    const favour = policyWith({ provider: { favour: abs(p.hundredOne) } });
    const c = fee('fee.provider', fees({ provider: p.providerDown101 }), favour);
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', tolerance: p.hundredOne });
    expect(c.detail).toContain("in the platform's favour");
  });

  it('referral fee down is the disfavour, up the favour', () => {
    const policy = policyWith({ referral: { disfavour: abs(p.hundred) } });
    expect(fee('fee.referral', fees({ referral: p.referralDown100 }), policy)).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: `-${p.hundred}`,
    });
    expect(fee('fee.referral', fees({ referral: p.referralDown101 }), policy).verdict).toBe('MISMATCH');
    const up = fee(
      'fee.referral',
      fees({ referral: p.referralUp101 }),
      policyWith({ referral: { disfavour: abs(p.provider) } }),
    );
    expect(up).toMatchObject({ verdict: 'MISMATCH', delta: p.hundredOne, tolerance: '0' });
    expect(up.detail).toContain("in the platform's favour");
    expect(
      fee(
        'fee.referral',
        fees({ referral: p.referralUp101 }),
        policyWith({ referral: { favour: abs(p.hundredOne) } }),
      ).verdict,
    ).toBe('WITHIN_TOLERANCE');
  });

  it('payout network fee up is the disfavour', () => {
    const policy = policyWith({ payoutNetwork: { disfavour: abs(p.hundred) } });
    expect(fee('fee.payout_network', fees({ network: p.networkUp100 }), policy)).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      expected: p.network,
      delta: p.hundred,
    });
    expect(fee('fee.payout_network', fees({ network: p.networkUp101 }), policy).verdict).toBe('MISMATCH');
    expect(
      fee(
        'fee.payout_network',
        fees({ network: p.networkUp101 }),
        policyWith({ payoutNetwork: { favour: abs(p.sum) } }),
      ).verdict,
    ).toBe('MISMATCH');
  });

  it('sum up is the disfavour: a favour-only sum tolerance does not cover it', () => {
    expect(
      fee('fee.sum', fees({ provider: p.providerUp101 }), policyWith({ sum: { favour: abs(p.hundredOne) } })),
    ).toMatchObject({ verdict: 'MISMATCH', delta: p.hundredOne, tolerance: '0' });
    expect(
      fee(
        'fee.sum',
        fees({ referral: p.referralDown101 }),
        policyWith({ sum: { favour: abs(p.hundredOne) } }),
      ),
    ).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: `-${p.hundredOne}` });
  });

  it('referral halved, provider fee raised as much, 0.5 relative in the favour only: MISMATCH on both, sum MATCHED', () => {
    const moved = fees({ referral: p.halfReferral, provider: p.providerPlusHalfReferral });
    const favourOnly = parseReconciliationPolicy({ RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5' });
    const result = run(moved, favourOnly);
    expect(named(result, 'fee.referral')).toMatchObject({
      verdict: 'MISMATCH',
      delta: `-${p.halfReferral}`,
      tolerance: '0',
    });
    expect(named(result, 'fee.provider')).toMatchObject({ verdict: 'MISMATCH', delta: p.halfReferral });
    expect(named(result, 'fee.sum')).toMatchObject({ verdict: 'MATCHED', delta: '0' });
    expect(result.verdict).toBe('MISMATCH');
    // The same 0.5 in the disfavour covers both: half the referral fee exactly, and under half the provider's.
    const disfavour = run(
      moved,
      parseReconciliationPolicy({ RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '0.5' }),
    );
    expect(named(disfavour, 'fee.referral')).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      tolerance: p.halfReferral,
    });
    expect(named(disfavour, 'fee.provider')).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      tolerance: p.halfProvider,
    });
  });

  it('a fee with more decimal places than the currency has is UNVERIFIABLE, and so is the sum', () => {
    const result = run(fees({ network: p.excess }));
    const c = named(result, 'fee.payout_network');
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', actual: p.excess });
    expect(c.detail).toContain(
      `final payoutNetworkFees ${p.excess} has ${p.decimals + 1} decimal places, more than ${currency}'s ${p.decimals}: comparing it would need rounding`,
    );
    expect(named(result, 'fee.sum').verdict).toBe('UNVERIFIABLE');
    expect(named(result, 'fee.provider').verdict).toBe('MATCHED');
  });
});

describe('fee checks on the base swap', () => {
  it('compare as decimals, not text', () => {
    const result = run({
      final: { providerFees: '0.00150', referralFees: '0.0005000', payoutNetworkFees: '0.00042' },
    });
    for (const name of FEE_CHECKS)
      expect(named(result, name)).toMatchObject({ verdict: 'MATCHED', delta: '0' });
    expect(named(result, 'fee.provider')).toMatchObject({ expected: '0.0015', actual: '0.0015' });
    expect(named(result, 'fee.sum')).toMatchObject({ expected: '0.00242', actual: '0.00242' });
  });

  it('default policy: exact both ways, so any difference is a MISMATCH', () => {
    expect(named(run({ final: { providerFees: '0.0016' } }), 'fee.provider')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.0015',
      actual: '0.0016',
      delta: '0.0001',
      tolerance: '0',
    });
    expect(named(run({ final: { referralFees: '0.0006' } }), 'fee.referral')).toMatchObject({
      verdict: 'MISMATCH',
      delta: '0.0001',
    });
  });

  it('relative tolerance is a ratio of the creation fee; the larger of absolute and relative applies', () => {
    // 10% of 0.0015 = 0.00015.
    const relative = policyWith({ provider: { disfavour: tol('0', '0.1') } });
    expect(named(run({ final: { providerFees: '0.00165' } }, relative), 'fee.provider')).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      tolerance: '0.00015',
    });
    expect(
      named(run({ final: { providerFees: '0.001650000000000001' } }, relative), 'fee.provider'),
    ).toMatchObject({
      verdict: 'MISMATCH',
      delta: '0.000150000000000001',
    });
    const both = (absolute: string) => policyWith({ provider: { disfavour: tol(absolute, '0.1') } });
    expect(named(run({ final: { providerFees: '0.0016' } }, both('0.0001')), 'fee.provider').tolerance).toBe(
      '0.00015',
    );
    expect(named(run({ final: { providerFees: '0.0016' } }, both('0.001')), 'fee.provider').tolerance).toBe(
      '0.001',
    );
  });

  it('a per-kind key wins over the shared one, per direction', () => {
    const policy = parseReconciliationPolicy({
      RECONCILE_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0.001',
      RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0',
    });
    const result = run({ final: { providerFees: '0.0016', payoutNetworkFees: '0.00052' } }, policy);
    expect(named(result, 'fee.provider')).toMatchObject({ verdict: 'MISMATCH', tolerance: '0' });
    expect(named(result, 'fee.payout_network')).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      tolerance: '0.001',
    });
    expect(named(result, 'fee.sum')).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '0.0002' });
  });

  it('value moved from amount to network fee fails the user side even with a generous network fee tolerance', () => {
    const generous = parseReconciliationPolicy({
      RECONCILE_PAYOUT_NETWORK_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '100',
      RECONCILE_PAYOUT_NETWORK_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '1',
      RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '100',
    });
    // Signed 20 ETH with 0.00042 estimated; 10 ETH moved from the amount to the network fee.
    const result = run(
      {
        decoded: { amount_to_wallet: 20000000000000000000n },
        final: { amount: '9.99958', payoutNetworkFees: '10.00042' },
      },
      generous,
    );
    expect(named(result, 'fee.payout_network').verdict).toBe('WITHIN_TOLERANCE');
    expect(named(result, 'fee.sum').verdict).toBe('WITHIN_TOLERANCE');
    expect(named(result, 'amount.to_wallet')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '19.99958',
      actual: '9.99958',
      delta: '-10',
    });
    expect(named(result, 'amount.partner_side')).toMatchObject({ verdict: 'MATCHED', actual: '20' });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('a missing or refused fee is UNVERIFIABLE with the reason, and the sum with it', () => {
    const missing = run({ final: { referralFees: null } });
    expect(named(missing, 'fee.referral')).toMatchObject({
      verdict: 'UNVERIFIABLE',
      expected: '0.0005',
      actual: null,
    });
    expect(named(missing, 'fee.referral').detail).toBe('no final referralFees reported');
    expect(named(missing, 'fee.sum').detail).toContain(
      'the sum of the final fees unknown: no final referralFees reported',
    );
    const negative = named(run({ final: { providerFees: '-0.0015' } }), 'fee.provider');
    expect(negative.verdict).toBe('UNVERIFIABLE');
    expect(negative.detail).toContain('must not be negative');
    const created = named(
      run({ creation: { fees: { providerFees: 'n/a', referralFees: '0', payoutNetworkFees: '0' } } }),
      'fee.provider',
    );
    expect(created).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '0.0015' });
    expect(created.detail).toContain('providerFees at creation refused');
  });

  it('unknown currency decimals: fees still compared, the unchecked precision noted', () => {
    const c = named(
      run({
        request: { payloadCurrencyTo: 'FOO' },
        decoded: { currency_to: 'FOO' },
        final: { providerFees: '0.0016' },
      }),
      'fee.provider',
    );
    expect(c.verdict).toBe('MISMATCH');
    expect(c.detail).toContain("no decimals known for FOO: the fees' precision is not checked");
  });

  it('fees of a swap that is not final are UNVERIFIABLE', () => {
    const c = named(run({ final: { final: false, status: 'PENDING' } }), 'fee.provider');
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', delta: '0' });
    expect(c.detail).toContain('has not ended (PENDING)');
  });
});

describe('fees of REFUNDED and EXPIRED swaps: NOT_APPLICABLE, shown as reported', () => {
  const ended = (status: string, final: Change['final'] = {}): Change => ({
    final: {
      status,
      amount: null,
      payinTransactionId: status === 'EXPIRED' ? null : 'f4184fc5',
      payoutTransactionId: null,
      refundTransactionId: status === 'REFUNDED' ? 'bc1refund' : null,
      ...final,
    },
  });

  it.each(['REFUNDED', 'EXPIRED'])('%s: every fee check is NOT_APPLICABLE, its figures shown', (status) => {
    const result = run(ended(status, { providerFees: '0', referralFees: '0', payoutNetworkFees: '0' }));
    for (const name of FEE_CHECKS) {
      const c = named(result, name);
      expect(c.verdict).toBe('NOT_APPLICABLE');
      expect(c.detail).toBe(`no swap was executed (${status}): fees shown as reported, not judged`);
    }
    expect(named(result, 'fee.provider')).toMatchObject({ expected: '0.0015', actual: '0' });
    expect(named(result, 'fee.sum')).toMatchObject({ expected: '0.00242', actual: '0' });
    // Clean evidence otherwise: the fees never count against the verdict.
    expect(result.verdict).toBe('MATCHED');
  });

  it('even fees raised far beyond any tolerance, or missing, never count there', () => {
    const result = run(ended('REFUNDED', { providerFees: '5', referralFees: null }));
    for (const name of FEE_CHECKS) expect(named(result, name).verdict).toBe('NOT_APPLICABLE');
    expect(named(result, 'fee.provider').actual).toBe('5');
    expect(result.verdict).toBe('MATCHED');
  });

  it('a FINISHED swap with zero fees is judged as usual: MISMATCH', () => {
    expect(named(run({ final: { providerFees: '0' } }), 'fee.provider').verdict).toBe('MISMATCH');
  });
});

describe("fee.extra: the webhook's extra fee", () => {
  it('none reported: NOT_APPLICABLE; zero: MATCHED', () => {
    expect(named(run(), 'fee.extra').verdict).toBe('NOT_APPLICABLE');
    expect(named(run({ final: { extraFees: '0' } }), 'fee.extra').verdict).toBe('MATCHED');
  });

  it('an extra fee on a FINISHED swap is a MISMATCH: no creation or signed figure has it', () => {
    const result = run({ final: { extraFees: '0.0003' } });
    expect(named(result, 'fee.extra')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0',
      actual: '0.0003',
    });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('bad text is UNVERIFIABLE; on a refund it is shown, not judged', () => {
    expect(named(run({ final: { extraFees: '-1' } }), 'fee.extra').verdict).toBe('UNVERIFIABLE');
    const refund = run({
      final: { status: 'REFUNDED', amount: null, payoutTransactionId: null, extraFees: '0.1' },
    });
    expect(named(refund, 'fee.extra').verdict).toBe('NOT_APPLICABLE');
  });
});

// Keeps EXACT_FEE in use as the documented building block of the default.
it('the default policy is EXACT_FEE both ways for every kind', () => {
  for (const kind of ['provider', 'referral', 'payoutNetwork', 'sum'] as const)
    expect(DEFAULT_RECONCILIATION_POLICY.fees[kind]).toEqual({ favour: EXACT_FEE, disfavour: EXACT_FEE });
});
