import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RECONCILIATION_POLICY,
  ReconciliationInputError,
  reconcileSwap,
  type ReconciledCheck,
} from '../../src/reconciler/index.ts';
import { input, named, type Change } from './support.ts';

const checkOf =
  (name: string) =>
  (change: Change = {}): ReconciledCheck =>
    named(reconcileSwap(input(change), DEFAULT_RECONCILIATION_POLICY), name);
/** User side: the final amount alone against signed − creation network fee estimate. */
const amount = checkOf('amount.to_wallet');
/** Partner side: final amount + final network fee against signed. */
const partner = checkOf('amount.partner_side');

const ONE_ETH = 1000000000000000000n;

/**
 * A fixed or float swap that signed exactly 1 ETH with a network fee estimate of 0.00042 at creation:
 * the user side expects 0.99958, the partner side 1.
 */
const oneEth = (
  tradeMethod: string,
  slippage: string | null,
  finalAmount: string,
  finalFee = '0.00042',
): Change => ({
  creation: { tradeMethod },
  request: { slippage },
  decoded: { amount_to_wallet: ONE_ETH },
  final: { amount: finalAmount, payoutNetworkFees: finalFee },
});

describe('amount.to_wallet: the final amount alone against signed − the creation network fee estimate', () => {
  it('the base swap: 1.234567890123456789 signed − 0.00042 estimate = 1.234147890123456789, paid exactly', () => {
    const c = amount();
    expect(c).toMatchObject({
      verdict: 'MATCHED',
      expected: '1.234147890123456789',
      actual: '1.234147890123456789',
      delta: '0',
      tolerance: '0',
    });
    expect(c.detail).toContain(
      'expected = signed 1.234567890123456789 − payout network fee estimate 0.00042; actual = final amount alone',
    );
    expect(c.detail).toContain(
      'signed amount_to_wallet 1234567890123456789 atomic units of ETH (18 decimals)',
    );
  });

  it('the final network fee does not enter the user side: a higher fee with the same amount is still MATCHED', () => {
    expect(amount(oneEth('fixed', null, '0.99958', '0.5'))).toMatchObject({
      verdict: 'MATCHED',
      expected: '0.99958',
      actual: '0.99958',
    });
  });

  it('value moved from amount to network fee (amount 0.0001 short, fee 0.0001 above its estimate): user side MISMATCH, partner side MATCHED', () => {
    const moved = oneEth('fixed', null, '0.99948', '0.00052');
    const user = amount(moved);
    expect(user).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.99958',
      actual: '0.99948',
      delta: '-0.0001',
      tolerance: '0',
    });
    expect(user.detail).not.toContain('favour');
    expect(partner(moved)).toMatchObject({ verdict: 'MATCHED', expected: '1', actual: '1', delta: '0' });
  });

  it('a fee charged below its estimate with the amount raised as much: user side in the user favour, partner side MATCHED', () => {
    const c = amount(oneEth('fixed', null, '0.99968', '0.00032'));
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '0.0001' });
    expect(c.detail).toContain("in the user's favour");
    expect(partner(oneEth('fixed', null, '0.99968', '0.00032')).verdict).toBe('MATCHED');
  });

  it('no network fee estimate at creation: UNVERIFIABLE, the signed amount includes an unknown fee', () => {
    const c = amount({
      creation: { fees: { providerFees: '0.0015', referralFees: '0.0005', payoutNetworkFees: null } },
    });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '1.234147890123456789' });
    expect(c.detail).toContain('no payout network fee estimate at creation reported');
  });

  it('an estimate above the signed amount leaves no amount to the wallet: UNVERIFIABLE', () => {
    const c = amount({
      decoded: { amount_to_wallet: 100000000000000n },
      creation: { fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: '0.001' } },
      final: { amount: '0' },
    });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '-0.0009' });
    expect(c.detail).toContain(
      'the payout network fee estimate 0.001 exceeds the signed amount_to_wallet 0.0001',
    );
  });
});

describe('amount.to_wallet: fixed swaps (at least expected × (1 − slippage))', () => {
  it('exactly the expected amount is MATCHED, the tolerance 1% of 0.99958', () => {
    expect(amount(oneEth('fixed', '0.01', '0.99958'))).toMatchObject({
      verdict: 'MATCHED',
      expected: '0.99958',
      actual: '0.99958',
      delta: '0',
      tolerance: '0.0099958',
    });
  });

  it('exactly at the boundary (0.99958 − 0.0099958 = 0.9895842) is WITHIN_TOLERANCE', () => {
    const c = amount(oneEth('fixed', '0.01', '0.9895842'));
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '-0.0099958', tolerance: '0.0099958' });
    expect(c.detail).toContain('short of the expected amount, within the slippage');
  });

  it('one wei beyond the boundary is a MISMATCH', () => {
    const c = amount(oneEth('fixed', '0.01', '0.989584199999999999'));
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.009995800000000001' });
    expect(c.detail).toContain('more than the slippage allows');
  });

  it('above the expected amount is in the user favour: WITHIN_TOLERANCE, never MISMATCH, whatever the slippage', () => {
    const c = amount(oneEth('fixed', '0.01', '1.49958'));
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', actual: '1.49958', delta: '0.5' });
    expect(c.detail).toContain("in the user's favour");
    expect(amount(oneEth('fixed', null, '0.999580000000000001'))).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: '0.000000000000000001',
      tolerance: '0',
    });
  });

  it('with no slippage agreed a fixed swap stays exact: one wei short is a MISMATCH; the provider default is not used', () => {
    const c = amount({ ...oneEth('fixed', null, '0.999579999999999999'), providerDefaultSlippage: '0.5' });
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.000000000000000001', tolerance: '0' });
    expect(c.detail).toContain('at least the expected amount required');
  });
});

describe('amount.to_wallet: float swaps (within ± expected × slippage; a gain is never a MISMATCH)', () => {
  it.each([
    ['1.0095758', 'WITHIN_TOLERANCE', '0.0099958', 'within the slippage'],
    ['1.009575800000000001', 'WITHIN_TOLERANCE', '0.009995800000000001', 'beyond the slippage'],
    ['1.5', 'WITHIN_TOLERANCE', '0.50042', "in the user's favour: never a mismatch"],
    ['0.9895842', 'WITHIN_TOLERANCE', '-0.0099958', 'within the slippage'],
    ['0.989584199999999999', 'MISMATCH', '-0.009995800000000001', 'more than the slippage allows'],
    ['0.99958', 'MATCHED', '0', 'equal to the expected amount'],
  ])('final amount %s is %s (delta %s)', (finalAmount, verdict, delta, words) => {
    const c = amount(oneEth('float', '0.01', finalAmount));
    expect(c).toMatchObject({
      verdict,
      expected: '0.99958',
      actual: finalAmount,
      delta,
      tolerance: '0.0099958',
    });
    expect(c.detail).toContain(words);
  });
});

describe('amount.to_wallet: which slippage applies', () => {
  // Expected 0.99958, actual 0.99358: 0.006 short.
  const short = (
    request: string | null | undefined,
    quote: string | null,
    tradeMethod = 'fixed',
    providerDefaultSlippage?: string | null,
  ): Change => ({
    creation: { tradeMethod },
    request: { slippage: request },
    quote: { amountFrom: '0.05', defaultSlippage: quote },
    decoded: { amount_to_wallet: ONE_ETH },
    final: { amount: '0.99358', payoutNetworkFees: '0.00042' },
    ...(providerDefaultSlippage !== undefined ? { providerDefaultSlippage } : {}),
  });

  it('the request slippage wins over the quote defaultSlippage', () => {
    const c = amount(short('0.005', '0.01'));
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.006', tolerance: '0.0049979' });
    expect(c.detail).toContain('slippage 0.005 from the request slippage');
  });

  it('without a request slippage (absent or blank) the quote defaultSlippage applies', () => {
    for (const request of [null, undefined, '']) {
      const c = amount(short(request, '0.01'));
      expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '-0.006', tolerance: '0.0099958' });
      expect(c.detail).toContain('slippage 0.01 from the quote defaultSlippage');
    }
  });

  it('a request slippage of 0 is an agreed value, not an absent one', () => {
    expect(amount(short('0', '0.01'))).toMatchObject({ verdict: 'MISMATCH', tolerance: '0' });
    expect(amount(short('0', null, 'float', '0.5'))).toMatchObject({ verdict: 'MISMATCH', tolerance: '0' });
  });

  it('float with none agreed: the provider default slippage applies (request and quote still win)', () => {
    const c = amount(short(null, null, 'float', '0.01'));
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '-0.006', tolerance: '0.0099958' });
    expect(c.detail).toContain('slippage 0.01 from the provider default slippage');
    expect(amount(short(null, null, 'float', '0.005'))).toMatchObject({
      verdict: 'MISMATCH',
      tolerance: '0.0049979',
    });
    expect(amount(short(null, '0.005', 'float', '0.01')).detail).toContain('from the quote defaultSlippage');
  });

  it('float with no slippage anywhere: below expected is UNVERIFIABLE with the reason', () => {
    for (const providerDefaultSlippage of [undefined, null, '']) {
      const c = amount(short(null, null, 'float', providerDefaultSlippage));
      expect(c).toMatchObject({
        verdict: 'UNVERIFIABLE',
        expected: '0.99958',
        delta: '-0.006',
        tolerance: null,
      });
      expect(c.detail).toContain('no slippage agreed for a float swap');
    }
    expect(amount({ ...short(null, null, 'float'), quote: null }).verdict).toBe('UNVERIFIABLE');
  });

  it('float with no slippage anywhere: above expected is WITHIN_TOLERANCE, equal is MATCHED, never MISMATCH', () => {
    const none = (finalAmount: string) => amount({ ...oneEth('float', null, finalAmount), quote: null });
    const above = none('2');
    expect(above).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '1.00042', tolerance: null });
    expect(above.detail).toContain("in the user's favour: never a mismatch");
    expect(none('0.99958')).toMatchObject({ verdict: 'MATCHED', delta: '0' });
    expect(none('0.999579999999999999').verdict).toBe('UNVERIFIABLE');
  });

  it('fixed with no slippage anywhere: exact, and the detail says so', () => {
    const c = amount(short(null, null));
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.006', tolerance: '0' });
    expect(c.detail).toContain('no slippage agreed');
    expect(amount({ ...short(null, null), quote: null })).toMatchObject({
      verdict: 'MISMATCH',
      tolerance: '0',
    });
  });

  it.each([
    ['1.5', 'not a ratio from 0 to 1'],
    ['-0.01', 'must not be negative'],
    ['1e-2', 'not a decimal amount'],
    ['ten percent', 'not a decimal amount'],
  ])(
    'an invalid request slippage %s makes it UNVERIFIABLE (the quote is not used instead)',
    (slippage, why) => {
      const c = amount(short(slippage, '0.01'));
      expect(c).toMatchObject({
        verdict: 'UNVERIFIABLE',
        expected: '0.99958',
        actual: '0.99358',
        tolerance: null,
      });
      expect(c.detail).toContain(why);
    },
  );

  it('an invalid quote defaultSlippage or provider default slippage makes it UNVERIFIABLE', () => {
    expect(amount(short(null, '2')).verdict).toBe('UNVERIFIABLE');
    const c = amount(short(null, null, 'float', '1.01'));
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('provider default slippage 1.01 is not a ratio from 0 to 1');
  });
});

describe('amount.partner_side: final amount + final network fee against the signed amount', () => {
  it('the base swap: 1.234147890123456789 + 0.00042 = 1.234567890123456789 signed', () => {
    const c = partner();
    expect(c).toMatchObject({
      verdict: 'MATCHED',
      expected: '1.234567890123456789',
      actual: '1.234567890123456789',
      delta: '0',
      tolerance: '0',
    });
    expect(c.detail).toContain('final amount 1.234147890123456789 + final payoutNetworkFees 0.00042');
  });

  it('the same slippage rule, on the signed figure: fixed 1% of 1 ETH', () => {
    expect(partner(oneEth('fixed', '0.01', '0.98958'))).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      actual: '0.99',
      delta: '-0.01',
      tolerance: '0.01',
    });
    expect(partner(oneEth('fixed', '0.01', '0.989579999999999999'))).toMatchObject({
      verdict: 'MISMATCH',
      delta: '-0.010000000000000001',
    });
    const above = partner(oneEth('fixed', '0.01', '0.99958', '0.5'));
    expect(above).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '0.49958' });
    // Above the signed figure on the partner side is not the user's favour: it may be a fee.
    expect(above.detail).toContain('more than signed');
    expect(above.detail).not.toContain('favour');
  });

  it('float without slippage: below is UNVERIFIABLE, above WITHIN_TOLERANCE', () => {
    expect(partner({ ...oneEth('float', null, '0.9'), quote: null }).verdict).toBe('UNVERIFIABLE');
    expect(partner({ ...oneEth('float', null, '1.1'), quote: null }).verdict).toBe('WITHIN_TOLERANCE');
  });

  it('needs the final network fee: without it UNVERIFIABLE, while the user side is judged', () => {
    const noFee: Change = { final: { payoutNetworkFees: null } };
    const c = partner(noFee);
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234567890123456789', actual: null });
    expect(c.detail).toContain('no final payoutNetworkFees reported');
    expect(amount(noFee).verdict).toBe('MATCHED');
  });

  it.each([
    ['REFUNDED', 'refund'],
    ['EXPIRED', 'expiry'],
  ])('%s: no swap executed, the partner side is NOT_APPLICABLE (%s)', (status) => {
    const c = partner({ final: { status, amount: '0' } });
    expect(c).toMatchObject({ verdict: 'NOT_APPLICABLE', expected: null, actual: null });
    expect(c.detail).toContain(`no swap was executed (${status})`);
  });
});

/**
 * Hand-computed at precisions 0, 6, 8 and 18, signed S = 2^65 + 5 = 36893488147419103237 atomic units
 * (above 2^64), network fee estimate E = 1200 atomic units, so expected (user side) = S − E =
 * 36893488147419102037 atomic; 1% slippage of it = 368934881474191020.37 atomic (T = its whole part).
 * Figures are the same atomic numbers with the decimal point moved.
 */
const PRECISIONS = [
  {
    decimals: 0,
    estimate: '1200',
    feeExcess: '1200.1',
    net: '36893488147419102037',
    tolerance: '368934881474191020.37',
    within: '36524553265944911017', // net − T
    beyond: '36524553265944911016', // net − T − 1 atomic
    overT: '37262423028893293057', // net + T
    overT1: '37262423028893293058', // net + T + 1 atomic
    short10: '36893488147419102027',
    fee10: '1210',
    signed: '36893488147419103237',
    T: '368934881474191020',
    T1: '368934881474191021',
    one: '1',
    ten: '10',
    excess: '36893488147419102037.5',
  },
  {
    decimals: 6,
    estimate: '0.0012',
    feeExcess: '0.0012001',
    net: '36893488147419.102037',
    tolerance: '368934881474.19102037',
    within: '36524553265944.911017',
    beyond: '36524553265944.911016',
    overT: '37262423028893.293057',
    overT1: '37262423028893.293058',
    short10: '36893488147419.102027',
    fee10: '0.00121',
    signed: '36893488147419.103237',
    T: '368934881474.19102',
    T1: '368934881474.191021',
    one: '0.000001',
    ten: '0.00001',
    excess: '36893488147419.1020371',
  },
  {
    decimals: 8,
    estimate: '0.000012',
    feeExcess: '0.000012001',
    net: '368934881474.19102037',
    tolerance: '3689348814.7419102037',
    within: '365245532659.44911017',
    beyond: '365245532659.44911016',
    overT: '372624230288.93293057',
    overT1: '372624230288.93293058',
    short10: '368934881474.19102027',
    fee10: '0.0000121',
    signed: '368934881474.19103237',
    T: '3689348814.7419102',
    T1: '3689348814.74191021',
    one: '0.00000001',
    ten: '0.0000001',
    excess: '368934881474.191020371',
  },
  {
    decimals: 18,
    estimate: '0.0000000000000012',
    feeExcess: '0.0000000000000012001',
    net: '36.893488147419102037',
    tolerance: '0.36893488147419102037',
    within: '36.524553265944911017',
    beyond: '36.524553265944911016',
    overT: '37.262423028893293057',
    overT1: '37.262423028893293058',
    short10: '36.893488147419102027',
    fee10: '0.00000000000000121',
    signed: '36.893488147419103237',
    T: '0.36893488147419102',
    T1: '0.368934881474191021',
    one: '0.000000000000000001',
    ten: '0.00000000000000001',
    excess: '36.8934881474191020371',
  },
] as const;

type Precision = (typeof PRECISIONS)[number];

/** A swap in currency P<decimals> that signed S with estimate E; final amount and fee as given. */
const atPrecision = (
  p: Precision,
  tradeMethod: string,
  slippage: string | null,
  finalAmount: string,
  finalFee: string = p.estimate,
): Change => ({
  creation: {
    tradeMethod,
    fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: p.estimate },
  },
  request: { payloadCurrencyTo: `P${p.decimals}`, slippage },
  quote: null,
  decoded: { currency_to: `P${p.decimals}`, amount_to_wallet: 36893488147419103237n },
  final: { amount: finalAmount, payoutNetworkFees: finalFee, providerFees: '0', referralFees: '0' },
  magnitudes: (id) => (id === `P${p.decimals}` ? p.decimals : undefined),
});

describe.each(PRECISIONS)('both amount checks at precision $decimals, above 2^64 atomic units', (p) => {
  it('exact: MATCHED on both sides', () => {
    expect(amount(atPrecision(p, 'fixed', '0.01', p.net))).toMatchObject({
      verdict: 'MATCHED',
      expected: p.net,
      actual: p.net,
      delta: '0',
      tolerance: p.tolerance,
    });
    expect(partner(atPrecision(p, 'fixed', '0.01', p.net))).toMatchObject({
      verdict: 'MATCHED',
      expected: p.signed,
      actual: p.signed,
    });
  });

  it('fixed: short by T atomic is WITHIN_TOLERANCE, by T + 1 a MISMATCH; one atomic above is in the user favour', () => {
    expect(amount(atPrecision(p, 'fixed', '0.01', p.within))).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: `-${p.T}`,
    });
    expect(amount(atPrecision(p, 'fixed', '0.01', p.beyond))).toMatchObject({
      verdict: 'MISMATCH',
      delta: `-${p.T1}`,
    });
    const above = amount(atPrecision(p, 'fixed', null, p.overT1));
    expect(above).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: p.T1, tolerance: '0' });
    expect(above.detail).toContain("in the user's favour");
  });

  it('float: ± T atomic WITHIN_TOLERANCE; T + 1 above is a gain (WITHIN_TOLERANCE), T + 1 below a MISMATCH', () => {
    expect(amount(atPrecision(p, 'float', '0.01', p.overT))).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: p.T,
    });
    const gain = amount(atPrecision(p, 'float', '0.01', p.overT1));
    expect(gain).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: p.T1 });
    expect(gain.detail).toContain('beyond the slippage');
    expect(amount(atPrecision(p, 'float', '0.01', p.within)).verdict).toBe('WITHIN_TOLERANCE');
    expect(amount(atPrecision(p, 'float', '0.01', p.beyond))).toMatchObject({
      verdict: 'MISMATCH',
      delta: `-${p.T1}`,
    });
  });

  it('float with no slippage: one atomic above WITHIN_TOLERANCE, one below UNVERIFIABLE', () => {
    expect(amount(atPrecision(p, 'float', null, p.overT1)).verdict).toBe('WITHIN_TOLERANCE');
    const below = amount(atPrecision(p, 'float', null, p.short10));
    expect(below).toMatchObject({ verdict: 'UNVERIFIABLE', delta: `-${p.ten}` });
    expect(below.detail).toContain('no slippage agreed for a float swap');
  });

  it('value moved: amount 10 atomic short, network fee 10 atomic above its estimate', () => {
    const moved = atPrecision(p, 'fixed', null, p.short10, p.fee10);
    expect(amount(moved)).toMatchObject({ verdict: 'MISMATCH', expected: p.net, delta: `-${p.ten}` });
    expect(partner(moved)).toMatchObject({ verdict: 'MATCHED', expected: p.signed, actual: p.signed });
  });

  it('a final amount with one decimal place more than the currency has is UNVERIFIABLE, not rounded', () => {
    const c = amount(atPrecision(p, 'float', '0.01', p.excess));
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain(
      `final amount ${p.excess} has ${p.decimals + 1} decimal places, more than P${p.decimals}'s ${p.decimals}: comparing it would need rounding`,
    );
    expect(partner(atPrecision(p, 'float', '0.01', p.excess)).verdict).toBe('UNVERIFIABLE');
  });

  it('a network fee with more decimal places than the currency has makes the check that uses it UNVERIFIABLE', () => {
    const fee = p.feeExcess; // E + a tenth of an atomic unit
    const finalFee = partner(atPrecision(p, 'fixed', null, p.net, fee));
    expect(finalFee.verdict).toBe('UNVERIFIABLE');
    expect(finalFee.detail).toContain(`final payoutNetworkFees ${fee} has ${p.decimals + 1} decimal places`);
    // The user side does not use the final fee...
    expect(amount(atPrecision(p, 'fixed', null, p.net, fee)).verdict).toBe('MATCHED');
    // ...but it uses the estimate at creation.
    const estimate = atPrecision(p, 'fixed', null, p.net);
    const c = amount({
      ...estimate,
      creation: {
        ...estimate.creation,
        fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: fee },
      },
    });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain(
      `payout network fee estimate at creation ${fee} has ${p.decimals + 1} decimal places`,
    );
  });

  it('trailing zeros are not extra precision', () => {
    const padded = `${p.net}${p.decimals === 0 ? '.' : ''}000`;
    expect(amount(atPrecision(p, 'fixed', null, padded))).toMatchObject({
      verdict: 'MATCHED',
      actual: p.net,
    });
  });
});

describe('amounts: decimal edge cases', () => {
  it('2^128 − 1 wei (the largest 16-byte amount) compares to the last wei', () => {
    const max = (finalAmount: string): Change => ({
      decoded: { amount_to_wallet: 340282366920938463463374607431768211455n },
      creation: { fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: '0.000000000000000455' } },
      final: { amount: finalAmount, payoutNetworkFees: '0.000000000000000455' },
    });
    expect(amount(max('340282366920938463463.374607431768211'))).toMatchObject({
      verdict: 'MATCHED',
      expected: '340282366920938463463.374607431768211',
      delta: '0',
    });
    expect(partner(max('340282366920938463463.374607431768211'))).toMatchObject({
      verdict: 'MATCHED',
      expected: '340282366920938463463.374607431768211455',
    });
    expect(amount(max('340282366920938463463.374607431768210999'))).toMatchObject({
      verdict: 'MISMATCH',
      delta: '-0.000000000000000001',
    });
  });

  it('zero: a FINISHED swap that paid nothing is a MISMATCH by the whole expected amount', () => {
    expect(
      amount({ request: { slippage: '0.01' }, final: { amount: '0', payoutNetworkFees: '0' } }),
    ).toMatchObject({
      verdict: 'MISMATCH',
      actual: '0',
      delta: '-1.234147890123456789',
      tolerance: '0.01234147890123456789',
    });
  });

  it('zero signed, zero estimate and zero paid are equal', () => {
    expect(
      amount({
        decoded: { amount_to_wallet: 0n },
        creation: { fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: '0' } },
        final: { amount: '0.000', payoutNetworkFees: '0' },
      }),
    ).toMatchObject({ verdict: 'MATCHED', expected: '0', actual: '0', delta: '0' });
  });

  it.each([
    [{ amount: '-1.234147890123456789' }, 'final amount refused', 'must not be negative'],
    [{ amount: '1,5' }, 'final amount refused', 'not a decimal amount'],
    [{ amount: '1.2e-1' }, 'final amount refused', 'not a decimal amount'],
    [{ amount: ' 1.5' }, 'final amount refused', 'not a decimal amount'],
  ])('refuses %o as UNVERIFIABLE, still showing the expected amount', (final, what, why) => {
    const c = amount({ final });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234147890123456789', actual: null });
    expect(c.detail).toContain(what);
    expect(c.detail).toContain(why);
  });

  it('a refused final network fee makes the partner side UNVERIFIABLE', () => {
    const c = partner({ final: { payoutNetworkFees: '-0.00042' } });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('final payoutNetworkFees refused');
  });

  it('refuses money given as a JS number or bigint with a typed error (a caller bug)', () => {
    const asNumber = input({ final: { amount: 1.234147890123456 as unknown as string } });
    expect(() => reconcileSwap(asNumber, DEFAULT_RECONCILIATION_POLICY)).toThrow(ReconciliationInputError);
    expect(() => reconcileSwap(asNumber, DEFAULT_RECONCILIATION_POLICY)).toThrow(
      /never passes through a JS number/,
    );
    const asBigint = input({ final: { payoutNetworkFees: 42n as unknown as string } });
    expect(() => reconcileSwap(asBigint, DEFAULT_RECONCILIATION_POLICY)).toThrow(ReconciliationInputError);
    const slippage = input({
      providerDefaultSlippage: 0.01 as unknown as string,
      creation: { tradeMethod: 'float' },
    });
    expect(() => reconcileSwap(slippage, DEFAULT_RECONCILIATION_POLICY)).toThrow(ReconciliationInputError);
  });

  it('an amount beyond the input bounds (61 integer digits) is refused, UNVERIFIABLE, never rounded', () => {
    // Bounded input (40 integer, 36 fraction digits) keeps every sum of a swap's figures exact.
    const huge = '1' + '0'.repeat(60) + '.' + '0'.repeat(29) + '1';
    const c = partner({
      final: { amount: huge, payoutNetworkFees: '0' },
      magnitudes: (id) => (id === 'ETH' ? 30 : undefined),
    });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('final amount refused');
    expect(c.detail).toContain('at most 40 integer and 36 fraction digits');
  });

  it('a slippage of 36 decimals gives an exact tolerance of 55 digits, never rounded', () => {
    // Bounded inputs keep every product inside 80 digits (exact.unit.spec.ts covers the refusal beyond):
    // (1.234567890123456789 - 0.00042) x 0.111...1 (36 ones), computed by hand with 200-digit decimals.
    const c = amount({ request: { slippage: '0.' + '1'.repeat(36) } });
    expect(c.tolerance).toBe('0.137127543347050754333333333333333333196205789986282579');
  });
});

describe('amount.to_wallet: UNVERIFIABLE, never guessed', () => {
  it.each([
    [{ amount: null }, 'no final amount reported'],
    [{ amount: '' }, 'no final amount reported'],
    [{ amount: '   ' }, 'no final amount reported'],
  ])('missing final data %o', (final, why) => {
    const c = amount({ final });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234147890123456789', actual: null });
    expect(c.detail).toContain(why);
  });

  it('an unknown destination currency magnitude', () => {
    const c = amount({ request: { payloadCurrencyTo: 'FOO' }, decoded: { currency_to: 'FOO' } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '1.234147890123456789' });
    expect(c.detail).toContain('no decimals known for platform currency "FOO"');
  });

  it('uses the given magnitudes instead of the platform table', () => {
    const c = amount({
      request: { payloadCurrencyTo: 'FOO' },
      decoded: { currency_to: 'FOO', amount_to_wallet: 123n },
      creation: { fees: { providerFees: '0', referralFees: '0', payoutNetworkFees: '0.03' } },
      final: { amount: '1.2', payoutNetworkFees: '0.03' },
      magnitudes: (id) => (id === 'FOO' ? 2 : undefined),
    });
    expect(c).toMatchObject({ verdict: 'MATCHED', expected: '1.2', actual: '1.2' });
  });

  it('a payload that signs another destination currency than the request asked for', () => {
    const c = amount({ decoded: { currency_to: 'BTC' } });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('the payload signs currency_to "BTC", the request asked for "ETH"');
  });

  it('an undecodable payload', () => {
    const c = amount({
      inspection: {
        decoded: undefined,
        signatureValid: false,
        findings: [
          {
            check: 'payload.decode',
            outcome: 'violation',
            detail: 'payload is not a NewTransactionResponse: x',
          },
        ],
      },
    });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '1.234147890123456789' });
    expect(c.detail).toContain(
      'the signed payload does not decode (payload is not a NewTransactionResponse: x)',
    );
  });

  it('a signature that does not verify: the figures are shown, unproven', () => {
    const c = amount({ inspection: { signatureValid: false } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234147890123456789', delta: '0' });
    expect(c.detail).toContain('not proven signed');
  });

  it('an unknown trade method', () => {
    const c = amount({ creation: { tradeMethod: 'limit' } });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('trade method "limit" is neither fixed nor float');
  });

  it.each([
    ['REFUNDED', 'refund'],
    ['EXPIRED', 'expiry'],
  ])('%s: nothing may reach the user: absent or 0 MATCHED, an amount MISMATCH (%s)', (status) => {
    expect(amount({ final: { status, amount: '0' } })).toMatchObject({ verdict: 'MATCHED', actual: '0' });
    expect(amount({ final: { status, amount: null } })).toMatchObject({
      verdict: 'MATCHED',
      actual: 'absent',
    });
    const paid = amount({ final: { status, amount: '0.5' } });
    expect(paid).toMatchObject({ verdict: 'MISMATCH', actual: '0.5' });
    expect(paid.detail).toContain(status === 'REFUNDED' ? 'a refund that also reports 0.5' : 'money moved');
    expect(amount({ final: { status, amount: 'x' } }).verdict).toBe('UNVERIFIABLE');
  });

  it('a swap that is not final, or final in a status without rules', () => {
    expect(amount({ final: { final: false, status: 'FINISHED' } }).verdict).toBe('UNVERIFIABLE');
    expect(amount({ final: { status: 'FAILED' } }).detail).toContain(
      'no amount rule for final status FAILED',
    );
  });
});
