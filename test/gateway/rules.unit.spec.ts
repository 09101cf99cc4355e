import { describe, expect, it } from 'vitest';
import {
  AmountLimitError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerResponseError,
  RateLimitedError,
  RegionRestrictedError,
} from '../../src/partner/errors.ts';
import {
  checkQuoteForSwap,
  checkSlippage,
  checkSwapShape,
  type StoredQuote,
  type SwapBody,
} from '../../src/gateway/rules.ts';
import { partnerFailure } from '../../src/gateway/service.ts';
import type { QuoteTerms } from '../../src/events/types.ts';

const NOW = Date.parse('2026-11-01T12:00:00Z');

const fixed: SwapBody = {
  providerId: 'p',
  tradeMethod: 'fixed',
  quoteRef: 'ref-1',
  payoutAddress: '0xabc',
  refundAddress: 'bc1q',
  nonce: 'aa'.repeat(32),
};

const quote = (over: Partial<StoredQuote> = {}): StoredQuote => ({
  quoteRef: 'ref-1',
  providerId: 'p',
  quoteId: 'q-1',
  tradeMethod: 'fixed',
  from: 'btc',
  to: 'eth',
  expiry: '2026-11-01T12:10:00.000Z',
  minSlippage: '0.005',
  maxSlippage: '0.1',
  terms: {} as QuoteTerms,
  response: {} as StoredQuote['response'],
  ...over,
});

describe('checkSwapShape', () => {
  it('needs quoteRef and no amount for fixed; from, to and amount for float', () => {
    expect(checkSwapShape(fixed)).toBeUndefined();
    expect(checkSwapShape({ ...fixed, quoteRef: undefined })?.status).toBe(400);
    expect(checkSwapShape({ ...fixed, amount: '1' })?.error).toMatch(/no amount/);
    const float: SwapBody = {
      ...fixed,
      tradeMethod: 'float',
      quoteRef: undefined,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    };
    expect(checkSwapShape(float)).toBeUndefined();
    expect(checkSwapShape({ ...float, amount: undefined })?.error).toMatch(/needs amount/);
    expect(checkSwapShape({ ...float, to: undefined })?.error).toMatch(/from and to/);
    expect(checkSwapShape({ ...float, amount: '0' })?.error).toMatch(/above zero/);
  });

  it('takes slippage only as a ratio from 0 to 1', () => {
    expect(checkSwapShape({ ...fixed, slippage: '0' })).toBeUndefined();
    expect(checkSwapShape({ ...fixed, slippage: '1' })).toBeUndefined();
    expect(checkSwapShape({ ...fixed, slippage: '1.01' })?.status).toBe(400);
    expect(checkSwapShape({ ...fixed, slippage: '-0.1' })?.status).toBe(400);
  });
});

describe('checkQuoteForSwap', () => {
  it('accepts a valid fixed quote of this provider and pair', () => {
    expect(checkQuoteForSwap(fixed, quote(), NOW, 2000)).toBeUndefined();
  });

  it("refuses an unknown quote, or another provider's, with SWAP_QUOTE_NOT_FOUND_ERROR", () => {
    for (const q of [undefined, quote({ providerId: 'other' })]) {
      const r = checkQuoteForSwap(fixed, q, NOW, 2000);
      expect(r).toMatchObject({
        status: 404,
        messageKey: 'SWAP_QUOTE_NOT_FOUND_ERROR',
        reason: 'quote_not_found',
      });
    }
  });

  it('refuses an expired quote, and one expiring within the margin', () => {
    expect(checkQuoteForSwap(fixed, quote({ expiry: '2026-11-01T11:59:59.000Z' }), NOW, 0)?.reason).toBe(
      'quote_expired',
    );
    expect(checkQuoteForSwap(fixed, quote({ expiry: '2026-11-01T12:00:01.000Z' }), NOW, 2000)?.reason).toBe(
      'quote_expired',
    );
    expect(
      checkQuoteForSwap(fixed, quote({ expiry: '2026-11-01T12:00:03.000Z' }), NOW, 2000),
    ).toBeUndefined();
    expect(checkQuoteForSwap(fixed, quote({ expiry: null }), NOW, 0)?.reason).toBe('quote_expired');
  });

  it('refuses a quote of another trade method or pair', () => {
    expect(checkQuoteForSwap(fixed, quote({ tradeMethod: 'float' }), NOW, 0)?.status).toBe(422);
    expect(checkQuoteForSwap({ ...fixed, from: 'ltc' }, quote(), NOW, 0)?.reason).toBe('quote_pair');
  });
});

describe('checkSlippage', () => {
  it('accepts slippage inside the quote range, bounds included', () => {
    for (const s of ['0.005', '0.05', '0.1']) expect(checkSlippage(s, quote())).toBeUndefined();
    expect(checkSlippage(undefined, quote())).toBeUndefined();
    expect(checkSlippage('0.9', undefined)).toBeUndefined();
  });

  it('refuses slippage outside it, naming the range', () => {
    const low = checkSlippage('0.004', quote());
    expect(low).toMatchObject({ status: 422, reason: 'slippage_out_of_range' });
    expect(low?.additionalFields).toEqual({ minSlippage: '0.005', maxSlippage: '0.1' });
    expect(checkSlippage('0.1000000000000000001', quote())?.status).toBe(422);
  });

  it('checks only the bounds the quote gives', () => {
    expect(checkSlippage('0.9', quote({ maxSlippage: null }))).toBeUndefined();
    expect(checkSlippage('0.001', quote({ minSlippage: null }))).toBeUndefined();
  });
});

describe('partnerFailure: what the wallet gets and what is recorded', () => {
  it('passes documented refusals on with their status, key and fields', () => {
    const e = new AmountLimitError('p', 'quote', 400, 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', 'too low', {
      minRequiredAmount: '0.1',
      maxRequiredAmount: '5',
    });
    const f = partnerFailure(e);
    expect(f.answer.status).toBe(400);
    expect(f.answer.body).toEqual({
      error: 'too low',
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      additionalFields: { minRequiredAmount: '0.1', maxRequiredAmount: '5' },
    });
    expect(f).toMatchObject({
      kind: 'partner_error',
      httpStatus: 400,
      errorKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
    });
    const region = partnerFailure(
      new RegionRestrictedError('p', 'swap-float', 451, 'REGION_RESTRICTED_ERROR', '', {}),
    );
    expect(region.answer.status).toBe(451);
    expect(region.answer.body.messageKey).toBe('REGION_RESTRICTED_ERROR');
  });

  it('a timeout that may have reached the partner is outcome_unknown (504); a refused connection is not', () => {
    const unknown = partnerFailure(
      new PartnerNetworkError('p', 'swap-fixed', true, true, new Error('timeout')),
    );
    expect(unknown.kind).toBe('outcome_unknown');
    expect(unknown.answer.status).toBe(504);
    const refused = partnerFailure(
      new PartnerNetworkError('p', 'swap-fixed', false, false, new Error('ECONNREFUSED')),
    );
    expect(refused.kind).toBe('partner_error');
    expect(refused.answer.status).toBe(502);
  });

  it('a malformed answer is invalid_response and keeps the swap id it named', () => {
    const e = new PartnerResponseError('p', 'swap-float', 'providerSig', 'missing');
    e.received = { swapId: 'sw-1' };
    const f = partnerFailure(e);
    expect(f.kind).toBe('invalid_response');
    expect(f.message).toContain('sw-1');
    expect(f.answer.body.swapId).toBe('sw-1');
  });

  it('420 becomes 503 with Retry-After; 5xx becomes 502', () => {
    const limited = partnerFailure(new RateLimitedError('p', 'quote', 2500, 1, 0, 1, ''));
    expect(limited.answer).toMatchObject({ status: 503, headers: { 'retry-after': '3' } });
    expect(partnerFailure(new PartnerHttpError('p', 'quote', 503, '', undefined)).answer.status).toBe(502);
  });
});
