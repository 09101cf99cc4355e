// The quote is part of the contract (issue 34, finding 4): before, every case below was MATCHED.
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/index.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  parseReconciliationPolicy,
  reconcileSwap,
  type ReconciliationPolicy,
} from '../../src/reconciler/index.ts';
import type { ReconciliationQuote } from '../../src/reconciler/types.ts';
import { input, named, type Change } from './support.ts';

const run = (change: Change = {}, policy: ReconciliationPolicy = DEFAULT_RECONCILIATION_POLICY) =>
  reconcileSwap(input(change), policy);

/** The base swap's quote, as the partner quoted it: what it then signed and stated at creation. */
const QUOTE: ReconciliationQuote = {
  amountFrom: '0.05',
  defaultSlippage: null,
  tradeMethod: 'fixed',
  amountTo: '1.234147890123456789',
  providerFees: '0.0015',
  referralFees: '0.0005',
  payoutNetworkFees: '0.00042',
};

/** The case: quoted 0.25 ETH + 0.002 network fee, signed 0.252, creation network fee 0.05. */
const HIDDEN_IN_ESTIMATE: Change = {
  quote: { ...QUOTE, amountTo: '0.25', payoutNetworkFees: '0.002' },
  decoded: { amount_to_wallet: 252000000000000000n },
  creation: { fees: { providerFees: '0.0015', referralFees: '0.0005', payoutNetworkFees: '0.05' } },
  final: { amount: '0.202', payoutNetworkFees: '0.05' },
};

describe('quote checks', () => {
  it('a swap created and signed as quoted: every quote check MATCHED', () => {
    const result = run({ quote: QUOTE });
    for (const name of [
      'quote.amount_to',
      'quote.fee.provider',
      'quote.fee.referral',
      'quote.fee.payout_network',
    ])
      expect(named(result, name).verdict).toBe('MATCHED');
    expect(result.verdict).toBe('MATCHED');
  });

  it('value hidden in the creation network-fee estimate is caught twice: the quote fee and the user side', () => {
    const result = run(HIDDEN_IN_ESTIMATE);
    expect(named(result, 'quote.amount_to').verdict).toBe('MATCHED');
    expect(named(result, 'quote.fee.payout_network')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.002',
      actual: '0.05',
      delta: '0.048',
    });
    // The user side expects signed − the lower estimate (the quote's 0.002): 0.25, and 0.202 arrived.
    expect(named(result, 'amount.to_wallet')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.25',
      actual: '0.202',
    });
    expect(named(result, 'amount.to_wallet').detail).toContain("the quote's payout network fee 0.002");
    // The partner side balances (0.202 + 0.05 = 0.252): why it alone could not see it.
    expect(named(result, 'amount.partner_side').verdict).toBe('MATCHED');
    expect(result.verdict).toBe('MISMATCH');
  });

  it('an unreadable quote fee never lets the user side fall back to the larger creation estimate', () => {
    // Issue 41, finding 8: 19 decimals for ETH (18). Before, the user side read signed − 0.05: MATCHED.
    for (const payoutNetworkFees of ['0.0020000000000000001', '', 'abc']) {
      const result = run({
        ...HIDDEN_IN_ESTIMATE,
        quote: { ...HIDDEN_IN_ESTIMATE.quote!, payoutNetworkFees },
      });
      const user = named(result, 'amount.to_wallet');
      expect(user.verdict).toBe('UNVERIFIABLE');
      expect(user.detail).toContain("the lower of the quote's and the creation's estimate is unknown");
      expect(result.verdict).not.toBe('MATCHED');
    }
  });

  it('a fixed swap signed below its quote is a MISMATCH; above it is in the user favour', () => {
    const below = named(run({ quote: { ...QUOTE, amountTo: '1.3' } }), 'quote.amount_to');
    expect(below.verdict).toBe('MISMATCH');
    expect(below.detail).toContain("below the quote by 0.065852109876543211, in the user's disfavour");
    expect(named(run({ quote: { ...QUOTE, amountTo: '1.2' } }), 'quote.amount_to').verdict).toBe(
      'WITHIN_TOLERANCE',
    );
  });

  it("the platform's referral fee cut from the quote's 0.0005 to 0.0001 is a MISMATCH", () => {
    const result = run({
      quote: QUOTE,
      creation: { fees: { providerFees: '0.0015', referralFees: '0.0001', payoutNetworkFees: '0.00042' } },
      final: { referralFees: '0.0001' },
    });
    expect(named(result, 'quote.fee.referral')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.0005',
      actual: '0.0001',
    });
    expect(result.verdict).toBe('MISMATCH');
  });

  it('directional: a provider fee raised is a MISMATCH, lowered is WITHIN_TOLERANCE', () => {
    const fees = (providerFees: string) => ({
      quote: QUOTE,
      creation: { fees: { providerFees, referralFees: '0.0005', payoutNetworkFees: '0.00042' } },
    });
    expect(named(run(fees('0.0016')), 'quote.fee.provider').verdict).toBe('MISMATCH');
    expect(named(run(fees('0.0014')), 'quote.fee.provider').verdict).toBe('WITHIN_TOLERANCE');
  });

  it('a float swap is judged within the configured band (default 2%), a fixed one exactly', () => {
    const float: Change = {
      quote: { ...QUOTE, tradeMethod: 'float', amountTo: '1.25' },
      creation: { tradeMethod: 'float' },
      request: { amountFrom: '0.05', slippage: '0.05' },
    };
    // Signed 1.234567890123456789 against 1.25042: 1.27% below, within 2%.
    expect(named(run(float), 'quote.amount_to').verdict).toBe('WITHIN_TOLERANCE');
    const strict = parseReconciliationPolicy({ RECONCILE_QUOTE_FLOAT_BAND: '0.01' });
    expect(named(run(float, strict), 'quote.amount_to').verdict).toBe('MISMATCH');
    expect(strict.quote?.float).toEqual(new Decimal('0.01'));
    const loose = parseReconciliationPolicy({ RECONCILE_QUOTE_FIXED_BAND: '0.1' });
    expect(named(run({ quote: { ...QUOTE, amountTo: '1.3' } }, loose), 'quote.amount_to').verdict).toBe(
      'WITHIN_TOLERANCE',
    );
  });

  it('a float swap whose amount is not the quoted one cannot be judged against it: UNVERIFIABLE', () => {
    const c = named(
      run({
        quote: { ...QUOTE, tradeMethod: 'float' },
        creation: { tradeMethod: 'float' },
        request: { amountFrom: '0.07', slippage: '0.05' },
      }),
      'quote.amount_to',
    );
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('the quote was for 0.05');
  });

  it('no recorded quote, or an outcome that delivered nothing: NOT_APPLICABLE', () => {
    expect(named(run({ quote: null }), 'quote.amount_to')).toMatchObject({
      verdict: 'NOT_APPLICABLE',
      detail: 'the swap was not made from a recorded quote',
    });
    const refund = run({
      quote: { ...QUOTE, amountTo: '9' },
      final: { status: 'REFUNDED', amount: null, payoutTransactionId: null, refundTransactionId: 'r' },
    });
    expect(named(refund, 'quote.amount_to').verdict).toBe('NOT_APPLICABLE');
    expect(refund.verdict).toBe('MATCHED');
  });

  it('a quote band out of range is refused with the key named', () => {
    expect(() => parseReconciliationPolicy({ RECONCILE_QUOTE_FLOAT_BAND: '2' })).toThrow(
      /RECONCILE_QUOTE_FLOAT_BAND/,
    );
  });
});
