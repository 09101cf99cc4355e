import { describe, expect, it } from 'vitest';
import { PartnerResponseError } from '../../src/partner/errors.ts';
import {
  swapResponseFeeFindings,
  validateCurrencyListResponse,
  validatePairListResponse,
  validateQuoteResponse,
  validateStatusResponse,
  validateSwapResponse,
} from '../../src/partner/validate.ts';
import { type ValidationContext } from '../../src/partner/checker.ts';

/** Input bounds of the partner client's validation (DESIGN "Input bounds") and issue 13 point 7. */

const ctx = (operation: ValidationContext['operation']): ValidationContext => ({ provider: 'p1', operation });

function refusedAt(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(PartnerResponseError);
    return (e as PartnerResponseError).field;
  }
  throw new Error('expected a PartnerResponseError');
}

const NUL = 'a\u0000b';
const HUGE = '1'.repeat(81);

const swap = {
  swapId: 's1',
  payinAddress: 'addr',
  createdAt: '2024-03-01T12:00:00Z',
  providerFees: '0.1',
  referralFees: '0.01',
  payoutNetworkFees: '0.001',
  providerSig: { payload: 'AAAA', signature: 'BBBB' },
};
const status = {
  status: 'FINISHED',
  quoteId: 'q1',
  amount: '8.1',
  payinTransactionId: 'a1',
  payoutTransactionId: 'b2',
  providerFees: '0.04',
  referralFees: '0.01',
  payoutNetworkFees: '0.0021',
};
const quote = {
  quoteId: 'q1',
  amount: '0.5',
  amountTo: '8.1',
  providerFees: '0.04',
  referralFees: '0.01',
  payoutNetworkFees: '0.0021',
  tradeMethod: 'fixed',
  expiry: '2025-06-01T12:30:00+0000',
};

describe('partner text is printable and bounded', () => {
  it.each(['swapId', 'payinAddress'])('swap creation: a NUL in %s is refused', (field) => {
    expect(refusedAt(() => validateSwapResponse({ ...swap, [field]: NUL }, ctx('swap-fixed')))).toBe(field);
  });

  it('swap creation: a NUL in the signed payload or signature is refused', () => {
    expect(
      refusedAt(() =>
        validateSwapResponse({ ...swap, providerSig: { payload: NUL, signature: 'B' } }, ctx('swap-fixed')),
      ),
    ).toBe('providerSig.payload');
    expect(
      refusedAt(() =>
        validateSwapResponse({ ...swap, providerSig: { payload: 'A', signature: NUL } }, ctx('swap-fixed')),
      ),
    ).toBe('providerSig.signature');
  });

  it.each(['status', 'quoteId', 'payinTransactionId', 'payoutTransactionId'])(
    'status: a NUL in %s is refused',
    (field) => {
      expect(refusedAt(() => validateStatusResponse({ ...status, [field]: NUL }, ctx('status')))).toBe(field);
    },
  );

  it('status: a control character or an over-long hash is refused, a long printable one is kept', () => {
    expect(
      refusedAt(() => validateStatusResponse({ ...status, payinTransactionId: 'ab\u001bc' }, ctx('status'))),
    ).toBe('payinTransactionId');
    expect(
      refusedAt(() =>
        validateStatusResponse({ ...status, payoutTransactionId: 'f'.repeat(257) }, ctx('status')),
      ),
    ).toBe('payoutTransactionId');
    const ok = validateStatusResponse({ ...status, payoutTransactionId: 'f'.repeat(256) }, ctx('status'));
    expect(ok.payoutTransactionId).toHaveLength(256);
  });

  it('quote: a NUL in quoteId is refused', () => {
    expect(refusedAt(() => validateQuoteResponse({ ...quote, quoteId: NUL }, ctx('quote')))).toBe('quoteId');
  });

  it('catalog: a NUL in a currency id, a pair or a cursor is refused', () => {
    expect(
      refusedAt(() =>
        validateCurrencyListResponse(
          { currencies: [{ id: NUL, type: 'coin', blockchain: 'bitcoin' }], next_cursor: null },
          ctx('currencies'),
        ),
      ),
    ).toBe('currencies[0].id');
    expect(
      refusedAt(() =>
        validatePairListResponse(
          {
            pairs: [{ from: 'btc', to: NUL, tradeMethod: ['fixed'], minSwapAmount: '1', maxSwapAmount: '2' }],
            next_cursor: null,
          },
          ctx('pairs'),
        ),
      ),
    ).toBe('pairs[0].to');
    expect(refusedAt(() => validatePairListResponse({ pairs: [], next_cursor: NUL }, ctx('pairs')))).toBe(
      'next_cursor',
    );
  });
});

describe('amounts are bounded (at most 40 integer and 36 fraction digits)', () => {
  it.each(['amountTo', 'providerFees', 'referralFees', 'payoutNetworkFees', 'amount'])(
    'quote: an 81-digit %s is refused',
    (field) => {
      expect(refusedAt(() => validateQuoteResponse({ ...quote, [field]: HUGE }, ctx('quote')))).toBe(field);
    },
  );

  it.each(['amount', 'providerFees', 'referralFees', 'payoutNetworkFees'])(
    'status: an 81-digit %s is refused',
    (field) => {
      expect(refusedAt(() => validateStatusResponse({ ...status, [field]: HUGE }, ctx('status')))).toBe(
        field,
      );
    },
  );

  it('status: 37 fraction digits are refused, 36 accepted', () => {
    expect(
      refusedAt(() => validateStatusResponse({ ...status, amount: `0.${'1'.repeat(37)}` }, ctx('status'))),
    ).toBe('amount');
    expect(validateStatusResponse({ ...status, amount: `0.${'1'.repeat(36)}` }, ctx('status')).amount).toBe(
      `0.${'1'.repeat(36)}`,
    );
  });

  it.each(['providerFees', 'referralFees', 'payoutNetworkFees'])(
    'swap creation: an 81-digit %s is refused',
    (field) => {
      expect(refusedAt(() => validateSwapResponse({ ...swap, [field]: HUGE }, ctx('swap-float')))).toBe(
        field,
      );
    },
  );
});

describe('a fee that is not decimal text leaves a real swap created with that fee unknown', () => {
  it.each([
    ['a number', 0.1],
    ['null', null],
    ['absent', undefined],
  ])('swap creation: providerFees as %s is unknown (null) with a response.fee_format finding', (_, value) => {
    const body = { ...swap, providerFees: value };
    const v = validateSwapResponse(body, ctx('swap-fixed'));
    expect(v.swapId).toBe('s1');
    expect(v.providerFees).toBeNull();
    expect(v.referralFees).toBe('0.01');
    const findings = swapResponseFeeFindings(body);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ check: 'response.fee_format', outcome: 'unverifiable' });
    expect(findings[0]!.detail).toContain('providerFees');
  });

  it('swap creation: the number is never kept as a value', () => {
    const v = validateSwapResponse({ ...swap, referralFees: 0.30000000000000004 }, ctx('swap-fixed'));
    expect(v.referralFees).toBeNull();
    expect(JSON.stringify(v)).not.toContain('0.30000000000000004');
    expect(swapResponseFeeFindings({ ...swap, referralFees: 0.30000000000000004 })[0]!.actual).toBe(
      'number 0.30000000000000004',
    );
  });

  it('swap creation: decimal fees give no finding', () => {
    expect(swapResponseFeeFindings(swap)).toEqual([]);
  });

  it.each([null, undefined, ''])(
    'status: referralFees %j is a valid status with that fee unknown',
    (value) => {
      const v = validateStatusResponse({ ...status, referralFees: value }, ctx('status'));
      expect(v.status).toBe('FINISHED');
      expect(v.referralFees).toBeNull();
      expect(v.providerFees).toBe('0.04');
    },
  );
});
