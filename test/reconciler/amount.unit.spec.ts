import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RECONCILIATION_POLICY,
  ReconciliationInputError,
  reconcileSwap,
  type ReconciledCheck,
} from '../../src/reconciler/index.ts';
import { input, named, type Change } from './support.ts';

const amount = (change: Change = {}): ReconciledCheck =>
  named(reconcileSwap(input(change), DEFAULT_RECONCILIATION_POLICY), 'amount.to_wallet');

const ONE_ETH = 1000000000000000000n;

/** A fixed or float swap that signed exactly 1 ETH, with the given slippage and final amount (fee 0.00042). */
const oneEth = (tradeMethod: string, slippage: string | null, finalAmount: string): Change => ({
  creation: { tradeMethod },
  request: { slippage },
  decoded: { amount_to_wallet: ONE_ETH },
  final: { amount: finalAmount, payoutNetworkFees: '0.00042' },
});

describe('amount.to_wallet: the network-fee rule', () => {
  it('compares the signed amount with the final amount plus the final payout network fee', () => {
    const c = amount();
    expect(c).toMatchObject({
      verdict: 'MATCHED',
      expected: '1.234567890123456789',
      actual: '1.234567890123456789',
      delta: '0',
      tolerance: '0',
    });
    expect(c.detail).toContain('final amount 1.234147890123456789 + final payoutNetworkFees 0.00042');
    expect(c.detail).toContain(
      'signed amount_to_wallet 1234567890123456789 atomic units of ETH (18 decimals)',
    );
  });

  it('would fail on the final amount alone: without the fee it falls short by exactly the fee', () => {
    const c = amount({ final: { payoutNetworkFees: '0' } });
    expect(c).toMatchObject({
      verdict: 'MISMATCH',
      expected: '1.234567890123456789',
      actual: '1.234147890123456789',
      delta: '-0.00042',
      tolerance: '0',
    });
  });
});

describe('amount.to_wallet: fixed swaps (at least the signed amount less the slippage)', () => {
  it('exactly the signed amount is MATCHED', () => {
    expect(amount(oneEth('fixed', '0.01', '0.99958'))).toMatchObject({
      verdict: 'MATCHED',
      expected: '1',
      actual: '1',
      delta: '0',
      tolerance: '0.01',
    });
  });

  it('exactly at the boundary (1 - 1%) is WITHIN_TOLERANCE', () => {
    const c = amount(oneEth('fixed', '0.01', '0.98958'));
    expect(c).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      actual: '0.99',
      delta: '-0.01',
      tolerance: '0.01',
    });
    expect(c.detail).toContain('short of the signed amount, within the slippage');
  });

  it('one wei beyond the boundary is a MISMATCH', () => {
    expect(amount(oneEth('fixed', '0.01', '0.989579999999999999'))).toMatchObject({
      verdict: 'MISMATCH',
      actual: '0.989999999999999999',
      delta: '-0.010000000000000001',
      tolerance: '0.01',
    });
  });

  it('above the signed amount is in the user favour: WITHIN_TOLERANCE, whatever the slippage', () => {
    const c = amount(oneEth('fixed', '0.01', '1.49958'));
    expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', actual: '1.5', delta: '0.5' });
    expect(c.detail).toContain("in the user's favour");
    expect(amount(oneEth('fixed', null, '0.999580000000000001'))).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      delta: '0.000000000000000001',
      tolerance: '0',
    });
  });
});

describe('amount.to_wallet: float swaps (within the slippage either way)', () => {
  it.each([
    ['1.00958', 'WITHIN_TOLERANCE', '1.01', '0.01'],
    ['1.009580000000000001', 'MISMATCH', '1.010000000000000001', '0.010000000000000001'],
    ['0.98958', 'WITHIN_TOLERANCE', '0.99', '-0.01'],
    ['0.989579999999999999', 'MISMATCH', '0.989999999999999999', '-0.010000000000000001'],
    ['0.99958', 'MATCHED', '1', '0'],
  ])('final amount %s is %s (actual %s, delta %s)', (finalAmount, verdict, actual, delta) => {
    expect(amount(oneEth('float', '0.01', finalAmount))).toMatchObject({
      verdict,
      expected: '1',
      actual,
      delta,
      tolerance: '0.01',
    });
  });
});

describe('amount.to_wallet: which slippage applies', () => {
  // Signed 1 ETH, actual 0.994: 0.006 short.
  const short = (request: string | null | undefined, quote: string | null): Change => ({
    request: { slippage: request },
    quote: { amountFrom: '0.05', defaultSlippage: quote },
    decoded: { amount_to_wallet: ONE_ETH },
    final: { amount: '0.99358', payoutNetworkFees: '0.00042' },
  });

  it('the request slippage wins over the quote defaultSlippage', () => {
    const c = amount(short('0.005', '0.01'));
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.006', tolerance: '0.005' });
    expect(c.detail).toContain('slippage 0.005 from the request slippage');
  });

  it('without a request slippage (absent or blank) the quote defaultSlippage applies', () => {
    for (const request of [null, undefined, '']) {
      const c = amount(short(request, '0.01'));
      expect(c).toMatchObject({ verdict: 'WITHIN_TOLERANCE', delta: '-0.006', tolerance: '0.01' });
      expect(c.detail).toContain('slippage 0.01 from the quote defaultSlippage');
    }
  });

  it('a request slippage of 0 is an agreed value, not an absent one', () => {
    expect(amount(short('0', '0.01'))).toMatchObject({ verdict: 'MISMATCH', tolerance: '0' });
  });

  it('with no slippage anywhere the match must be exact, and the detail says so', () => {
    const c = amount(short(null, null));
    expect(c).toMatchObject({ verdict: 'MISMATCH', delta: '-0.006', tolerance: '0' });
    expect(c.detail).toContain('no slippage agreed');
    expect(c.detail).toContain('exact match required');
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
      expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1', actual: '0.994', tolerance: null });
      expect(c.detail).toContain(why);
    },
  );

  it('an invalid quote defaultSlippage makes it UNVERIFIABLE', () => {
    expect(amount(short(null, '2')).verdict).toBe('UNVERIFIABLE');
  });
});

describe('amount.to_wallet: decimal edge cases', () => {
  it('amounts above 2^64 atomic units stay exact (2^64 + 1 wei)', () => {
    expect(
      amount({
        decoded: { amount_to_wallet: 18446744073709551617n },
        final: { amount: '18.446324073709551617', payoutNetworkFees: '0.00042' },
      }),
    ).toMatchObject({
      verdict: 'MATCHED',
      expected: '18.446744073709551617',
      actual: '18.446744073709551617',
    });
  });

  it('2^128 - 1 wei (the largest 16-byte amount) compares to the last wei', () => {
    const max: Change = {
      decoded: { amount_to_wallet: 340282366920938463463374607431768211455n },
      final: { amount: '340282366920938463463.374607431768211455', payoutNetworkFees: '0' },
    };
    expect(amount(max)).toMatchObject({
      verdict: 'MATCHED',
      expected: '340282366920938463463.374607431768211455',
      delta: '0',
    });
    expect(
      amount({
        ...max,
        final: { amount: '340282366920938463463.374607431768211454', payoutNetworkFees: '0' },
      }),
    ).toMatchObject({ verdict: 'MISMATCH', delta: '-0.000000000000000001' });
  });

  it('excess precision in the final amount is compared exactly, never rounded, and noted', () => {
    // 19 decimal places for an 18-decimal currency: 1e-19 above the signed amount.
    const excess: Change = {
      creation: { tradeMethod: 'float' },
      request: { slippage: '0.01' },
      final: { amount: '1.2341478901234567891' },
    };
    const c = amount(excess);
    expect(c).toMatchObject({
      verdict: 'WITHIN_TOLERANCE',
      expected: '1.234567890123456789',
      actual: '1.2345678901234567891',
      delta: '0.0000000000000000001',
    });
    expect(c.detail).toContain("final amount has 19 decimal places, more than ETH's 18: compared exactly");
    // With no slippage a float swap must match exactly: the extra 1e-19 is not rounded away.
    expect(amount({ ...excess, request: { slippage: null } })).toMatchObject({
      verdict: 'MISMATCH',
      delta: '0.0000000000000000001',
    });
  });

  it('zero: a FINISHED swap that paid nothing is a MISMATCH by the whole signed amount', () => {
    expect(
      amount({ request: { slippage: '0.01' }, final: { amount: '0', payoutNetworkFees: '0' } }),
    ).toMatchObject({
      verdict: 'MISMATCH',
      actual: '0',
      delta: '-1.234567890123456789',
      tolerance: '0.01234567890123456789',
    });
  });

  it('zero signed and zero paid are equal (the device rule reports the zero amount separately)', () => {
    expect(
      amount({ decoded: { amount_to_wallet: 0n }, final: { amount: '0.000', payoutNetworkFees: '0' } }),
    ).toMatchObject({ verdict: 'MATCHED', expected: '0', actual: '0', delta: '0' });
  });

  it.each([
    [{ amount: '-1.234147890123456789' }, 'final amount refused', 'must not be negative'],
    [{ payoutNetworkFees: '-0.00042' }, 'final payoutNetworkFees refused', 'must not be negative'],
    [{ amount: '1,5' }, 'final amount refused', 'not a decimal amount'],
    [{ amount: '1.2e-1' }, 'final amount refused', 'not a decimal amount'],
    [{ amount: ' 1.5' }, 'final amount refused', 'not a decimal amount'],
  ])('refuses %o as UNVERIFIABLE, still showing the signed amount', (final, what, why) => {
    const c = amount({ final });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234567890123456789', actual: null });
    expect(c.detail).toContain(what);
    expect(c.detail).toContain(why);
  });

  it('refuses money given as a JS number or bigint with a typed error (a caller bug)', () => {
    const asNumber = input({ final: { amount: 1.234147890123456 as unknown as string } });
    expect(() => reconcileSwap(asNumber, DEFAULT_RECONCILIATION_POLICY)).toThrow(ReconciliationInputError);
    expect(() => reconcileSwap(asNumber, DEFAULT_RECONCILIATION_POLICY)).toThrow(
      /never passes through a JS number/,
    );
    const asBigint = input({ final: { payoutNetworkFees: 42n as unknown as string } });
    expect(() => reconcileSwap(asBigint, DEFAULT_RECONCILIATION_POLICY)).toThrow(ReconciliationInputError);
  });

  it('refuses to round: a sum needing more than 80 digits is UNVERIFIABLE', () => {
    // 61 integer digits and 30 decimal places: 92 digit positions.
    const huge = '1' + '0'.repeat(60) + '.' + '0'.repeat(29) + '1';
    const c = amount({ final: { amount: huge, payoutNetworkFees: '0' } });
    expect(c.verdict).toBe('UNVERIFIABLE');
    expect(c.detail).toContain('needs more than 80 digits; not rounded');
  });
  it('refuses to round: a tolerance needing more than 80 digits is UNVERIFIABLE, the delta still shown', () => {
    // 19 significant digits signed x a 62-digit slippage ratio: up to 81 digits.
    const c = amount({ request: { slippage: '0.' + '1'.repeat(62) } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', delta: '0', tolerance: null });
    expect(c.detail).toContain('needs more than 80 digits; not rounded');
  });
});

describe('amount.to_wallet: UNVERIFIABLE, never guessed', () => {
  it.each([
    [{ amount: null }, 'no final amount reported'],
    [{ amount: '' }, 'no final amount reported'],
    [{ amount: '   ' }, 'no final amount reported'],
    [{ payoutNetworkFees: null }, 'no final payoutNetworkFees reported'],
  ])('missing final data %o', (final, why) => {
    const c = amount({ final });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234567890123456789', actual: null });
    expect(c.detail).toContain(why);
  });

  it('an unknown destination currency magnitude', () => {
    const c = amount({ request: { payloadCurrencyTo: 'FOO' }, decoded: { currency_to: 'FOO' } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '1.234567890123456789' });
    expect(c.detail).toContain('no decimals known for platform currency "FOO"');
  });

  it('uses the given magnitudes instead of the platform table', () => {
    const c = amount({
      request: { payloadCurrencyTo: 'FOO' },
      decoded: { currency_to: 'FOO', amount_to_wallet: 123n },
      final: { amount: '1.2', payoutNetworkFees: '0.03' },
      magnitudes: (id) => (id === 'FOO' ? 2 : undefined),
    });
    expect(c).toMatchObject({ verdict: 'MATCHED', expected: '1.23', actual: '1.23' });
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
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: '1.234567890123456789' });
    expect(c.detail).toContain(
      'the signed payload does not decode (payload is not a NewTransactionResponse: x)',
    );
  });

  it('a signature that does not verify: the figures are shown, unproven', () => {
    const c = amount({ inspection: { signatureValid: false } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: '1.234567890123456789', delta: '0' });
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
  ])('%s: the interface defines no amount, so none is compared', (status, word) => {
    const c = amount({ final: { status, amount: '0' } });
    expect(c).toMatchObject({ verdict: 'UNVERIFIABLE', expected: null, actual: null, delta: null });
    expect(c.detail).toContain(`defines no amount to the wallet for a ${word}`);
  });

  it('a swap that is not final, or final in a status without rules', () => {
    expect(amount({ final: { final: false, status: 'FINISHED' } }).verdict).toBe('UNVERIFIABLE');
    expect(amount({ final: { status: 'FAILED' } }).detail).toContain(
      'no amount rule for final status FAILED',
    );
  });
});
