import { describe, expect, it } from 'vitest';
import { PartnerResponseError } from '../../src/partner/errors.ts';
import {
  currencyNetwork,
  providerSignatureOf,
  validateCurrency,
  validateCurrencyListResponse,
  validatePairListResponse,
  validateQuoteResponse,
  validateStatusResponse,
  validateSwapResponse,
} from '../../src/partner/validate.ts';
import { parsePartnerTimestamp, type ValidationContext } from '../../src/partner/checker.ts';

const ctx = (operation: ValidationContext['operation']): ValidationContext => ({ provider: 'p1', operation });

function refusal(fn: () => unknown): PartnerResponseError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(PartnerResponseError);
    return e as PartnerResponseError;
  }
  throw new Error('expected a PartnerResponseError');
}

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

const status = {
  status: 'FINISHED',
  amount: '8.1',
  payinTransactionId: 'a1',
  payoutTransactionId: 'b2',
  providerFees: '0.04',
  referralFees: '0.01',
  payoutNetworkFees: '0.0021',
};

const swap = {
  swapId: 's1',
  payinAddress: 'addr',
  createdAt: '2024-03-01T12:00:00Z',
  providerFees: '0.1',
  referralFees: '0.01',
  payoutNetworkFees: '0.001',
  providerSig: { payload: 'AAAA', signature: 'BBBB' },
};

describe('parsePartnerTimestamp', () => {
  it.each([
    ['2025-06-01T12:30:00+0000', '2025-06-01T12:30:00.000Z'],
    ['2025-06-01T12:30:00+00:00', '2025-06-01T12:30:00.000Z'],
    ['2025-06-01T12:30:00Z', '2025-06-01T12:30:00.000Z'],
    ['2025-06-01T14:30:00+0200', '2025-06-01T12:30:00.000Z'],
    ['2025-06-01T07:00:00-0530', '2025-06-01T12:30:00.000Z'],
    ['2025-06-01T12:30:00.123456+0000', '2025-06-01T12:30:00.123Z'],
    ['2025-06-01T12:30+0000', '2025-06-01T12:30:00.000Z'],
    // Years 0001-0099 as written (Date.UTC reads them as 19xx), and the widest offset Postgres stores.
    ['0050-06-01T12:00:00Z', '0050-06-01T12:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['2025-06-01T12:30:00+15:59', '2025-05-31T20:31:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(parsePartnerTimestamp(text)?.toISOString()).toBe(iso);
  });

  it.each([
    '2025-06-01T12:30:00', // no offset: names no instant
    '2025-06-01',
    '2025-02-30T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-06-01T24:00:00Z',
    '2025-06-01 12:30:00Z',
    '1717245000',
    '2025-06-01T12:30:00+000',
    // What Postgres would refuse: an offset beyond ±15:59, year 0000, a day that does not exist.
    '2025-06-01T12:30:00+16:00',
    '2025-06-01T12:30:00-2359',
    '0000-06-01T12:00:00Z',
    '0001-01-01T00:00:00+01:00', // year 0000 in UTC
    '2025-02-29T00:00:00Z',
  ])('refuses %s', (text) => {
    expect(parsePartnerTimestamp(text)).toBeUndefined();
  });
});

describe('currencies', () => {
  it('accepts chainId without blockchain, and chainId wins over blockchain', () => {
    const evm = validateCurrency(
      { id: 'usdt', type: 'token', chainId: 137, contract: '0xc2' },
      'c',
      ctx('currencies'),
    );
    expect(currencyNetwork(evm)).toEqual({ kind: 'evm', chainId: 137 });
    const both = validateCurrency(
      { id: 'eth', type: 'coin', blockchain: 'ethereum', chainId: 1 },
      'c',
      ctx('currencies'),
    );
    expect(currencyNetwork(both)).toEqual({ kind: 'evm', chainId: 1 });
    const named = validateCurrency(
      { id: 'btc', type: 'coin', blockchain: 'bitcoin' },
      'c',
      ctx('currencies'),
    );
    expect(currencyNetwork(named)).toEqual({ kind: 'named', blockchain: 'bitcoin' });
  });

  it('ignores an empty blockchain when chainId is set, and drops null optionals', () => {
    const c = validateCurrency(
      { id: 'pol', type: 'coin', chainId: 137, blockchain: '', contract: null },
      'c',
      ctx('currencies'),
    );
    expect(c.chainId).toBe(137);
    expect('contract' in c).toBe(false);
  });

  it.each([
    [{ id: 'x', type: 'coin' }, 'c.blockchain', /blockchain or chainId/],
    [{ id: 'x', type: 'coin', blockchain: ' ' }, 'c.blockchain', /blockchain or chainId/],
    [{ id: 'x', type: 'coin', blockchain: 'b', contract: '0x1' }, 'c.contract', /only for tokens/],
    [{ id: 'x', type: 'nft', blockchain: 'b' }, 'c.type', /coin.*token/],
    [{ id: '', type: 'coin', blockchain: 'b' }, 'c.id', /empty/],
    [{ type: 'coin', blockchain: 'b' }, 'c.id', /non-empty string/],
    [{ id: 'x', type: 'coin', chainId: '137' }, 'c.chainId', /int32/],
    [{ id: 'x', type: 'coin', chainId: 1.5 }, 'c.chainId', /int32/],
    [{ id: 'x', type: 'coin', chainId: 2 ** 31 }, 'c.chainId', /int32/],
    [{ id: 'x', type: 'token', chainId: 1, contract: 7 }, 'c.contract', /string/],
  ])('refuses %j at %s', (raw, field, reason) => {
    const e = refusal(() => validateCurrency(raw, 'c', ctx('currencies')));
    expect(e.field).toBe(field);
    expect(e.reason).toMatch(reason);
    expect(e.operation).toBe('currencies');
    expect(e.provider).toBe('p1');
  });

  it('names the element of a page and requires next_cursor', () => {
    const bad = {
      currencies: [
        { id: 'a', type: 'coin', blockchain: 'b' },
        { id: 'b', type: 'coin' },
      ],
      next_cursor: null,
    };
    expect(refusal(() => validateCurrencyListResponse(bad, ctx('currencies'))).field).toBe(
      'currencies[1].blockchain',
    );
    expect(refusal(() => validateCurrencyListResponse({ currencies: [] }, ctx('currencies'))).field).toBe(
      'next_cursor',
    );
    expect(
      refusal(() => validateCurrencyListResponse({ currencies: [], next_cursor: '' }, ctx('currencies')))
        .field,
    ).toBe('next_cursor');
    expect(
      refusal(() => validateCurrencyListResponse({ currencies: {}, next_cursor: null }, ctx('currencies')))
        .field,
    ).toBe('currencies');
    expect(refusal(() => validateCurrencyListResponse([], ctx('currencies'))).field).toBe('');
  });

  it('keeps unknown fields of the page and of its elements', () => {
    const page = validateCurrencyListResponse(
      {
        currencies: [{ id: 'a', type: 'coin', blockchain: 'b', logo: 'x.png' }],
        next_cursor: null,
        total: 1,
      },
      ctx('currencies'),
    );
    expect((page as unknown as Record<string, unknown>).total).toBe(1);
    expect((page.currencies[0] as unknown as Record<string, unknown>).logo).toBe('x.png');
  });
});

describe('pairs', () => {
  const pair = {
    from: 'btc',
    to: 'eth',
    tradeMethod: ['fixed', 'float'],
    minSwapAmount: '0.001',
    maxSwapAmount: '5',
  };

  it('accepts a page', () => {
    const page = validatePairListResponse({ pairs: [pair], next_cursor: 'n' }, ctx('pairs'));
    expect(page.pairs[0]).toEqual(pair);
    expect(page.next_cursor).toBe('n');
  });

  it.each([
    [{ ...pair, tradeMethod: [] }, 'pairs[0].tradeMethod'],
    [{ ...pair, tradeMethod: ['fixed', 'swap'] }, 'pairs[0].tradeMethod[1]'],
    [{ ...pair, tradeMethod: 'fixed' }, 'pairs[0].tradeMethod'],
    [{ ...pair, minSwapAmount: 0.001 }, 'pairs[0].minSwapAmount'],
    [{ ...pair, minSwapAmount: '1e-3' }, 'pairs[0].minSwapAmount'],
    [{ ...pair, maxSwapAmount: '-5' }, 'pairs[0].maxSwapAmount'],
    [{ ...pair, minSwapAmount: '6' }, 'pairs[0].maxSwapAmount'],
    [{ ...pair, to: undefined }, 'pairs[0].to'],
  ])('refuses %j at %s', (raw, field) => {
    expect(
      refusal(() => validatePairListResponse({ pairs: [raw], next_cursor: null }, ctx('pairs'))).field,
    ).toBe(field);
  });
});

describe('quotes', () => {
  it('accepts a fixed quote with a +0000 expiry and keeps unknown fields', () => {
    const q = validateQuoteResponse(
      { ...quote, minAmountFrom: '0.001', maxAmountFrom: '10', extra: { a: 1 } },
      ctx('quote'),
    );
    expect(q.quoteId).toBe('q1');
    expect(q.minAmountFrom).toBe('0.001');
    expect((q as unknown as Record<string, unknown>).extra).toEqual({ a: 1 });
  });

  it('needs quoteId and expiry on fixed quotes only', () => {
    expect(refusal(() => validateQuoteResponse({ ...quote, quoteId: undefined }, ctx('quote'))).field).toBe(
      'quoteId',
    );
    expect(refusal(() => validateQuoteResponse({ ...quote, expiry: undefined }, ctx('quote'))).field).toBe(
      'expiry',
    );
    const float = validateQuoteResponse(
      { ...quote, tradeMethod: 'float', quoteId: undefined, expiry: null },
      ctx('quote'),
    );
    expect(float.quoteId).toBeUndefined();
    expect('expiry' in float).toBe(false);
  });

  it.each([
    [{ expiry: '2025-06-01T12:30:00' }, 'expiry'],
    [{ amountTo: 8.1 }, 'amountTo'],
    [{ providerFees: '' }, 'providerFees'],
    [{ referralFees: undefined }, 'referralFees'],
    [{ payoutNetworkFees: 'NaN' }, 'payoutNetworkFees'],
    [{ tradeMethod: 'FIXED' }, 'tradeMethod'],
    [{ defaultSlippage: '1.5' }, 'defaultSlippage'],
    [{ maxSlippage: '-0.1' }, 'maxSlippage'],
    [{ amount: ' 0.5' }, 'amount'],
  ])('refuses %j', (patch, field) => {
    const e = refusal(() => validateQuoteResponse({ ...quote, ...patch }, ctx('quote')));
    expect(e.field).toBe(field);
    expect(e.message).toContain(field);
  });

  it('checks the echoed amount and the trade method against the request', () => {
    const req = { from: 'btc', to: 'eth', amount: '0.50' };
    expect(validateQuoteResponse(quote, ctx('quote'), req).amount).toBe('0.5');
    expect(refusal(() => validateQuoteResponse(quote, ctx('quote'), { ...req, amount: '0.6' })).field).toBe(
      'amount',
    );
    expect(
      refusal(() => validateQuoteResponse(quote, ctx('quote'), { ...req, tradeMethod: 'float' })).field,
    ).toBe('tradeMethod');
  });
});

describe('swap responses', () => {
  it('accepts signature or payload_signature and prefers signature', () => {
    const a = validateSwapResponse(swap, ctx('swap-fixed'));
    expect(providerSignatureOf(a.providerSig)).toEqual({ value: 'BBBB', field: 'signature' });
    const b = validateSwapResponse(
      { ...swap, providerSig: { payload: 'AAAA', payload_signature: 'CCCC' } },
      ctx('swap-fixed'),
    );
    expect(providerSignatureOf(b.providerSig)).toEqual({ value: 'CCCC', field: 'payload_signature' });
    const both = validateSwapResponse(
      { ...swap, providerSig: { payload: 'AAAA', signature: 'BBBB', payload_signature: 'CCCC' } },
      ctx('swap-fixed'),
    );
    expect(providerSignatureOf(both.providerSig).value).toBe('BBBB');
  });

  it.each([
    [{ providerSig: { payload: 'AAAA' } }, 'providerSig.signature'],
    [{ providerSig: { signature: 'BBBB' } }, 'providerSig.payload'],
    [{ providerSig: 'AAAA.BBBB' }, 'providerSig'],
    [{ swapId: 12 }, 'swapId'],
    [{ payinAddress: '' }, 'payinAddress'],
    [{ createdAt: 1717245000 }, 'createdAt'],
    [{ providerFees: '0.1x' }, 'providerFees'],
    [{ providerFees: '1'.repeat(81) }, 'providerFees'],
  ])('refuses %j', (patch, field) => {
    expect(refusal(() => validateSwapResponse({ ...swap, ...patch }, ctx('swap-float'))).field).toBe(field);
  });
});

describe('a SwapResponse createdAt that is not a time', () => {
  it('is kept as sent, not refused: the partner created the swap (the gateway records it with a finding)', () => {
    expect(validateSwapResponse({ ...swap, createdAt: 'yesterday' }, ctx('swap-float')).createdAt).toBe(
      'yesterday',
    );
  });
});

describe('status', () => {
  it('never refuses the status string', () => {
    for (const s of ['PENDING', 'exchanging', 'WAITING_FOR_DEPOSIT', 'UNKNOWN', 'whatever']) {
      expect(validateStatusResponse({ ...status, status: s }, ctx('status')).status).toBe(s);
    }
  });

  it('treats empty, null or absent "as soon as known" fields as not known yet', () => {
    const empty = validateStatusResponse(
      { ...status, status: 'PENDING', amount: '', payinTransactionId: '', payoutTransactionId: null },
      ctx('status'),
    );
    expect(empty.amount).toBeUndefined();
    expect(empty.payinTransactionId).toBeUndefined();
    expect(empty.payoutTransactionId).toBeUndefined();
    const { amount: _a, payinTransactionId: _p, payoutTransactionId: _o, ...absent } = status;
    const v = validateStatusResponse(absent, ctx('status'));
    expect(v.amount).toBeUndefined();
    expect(v.providerFees).toBe('0.04');
  });

  it.each([
    [{ status: 3 }, 'status'],
    [{ status: undefined }, 'status'],
    [{ amount: 8.1 }, 'amount'],
    [{ amount: 'eight' }, 'amount'],
    [{ payinTransactionId: 42 }, 'payinTransactionId'],
    [{ providerFees: 0.04 }, 'providerFees'],
    [{ referralFees: '1'.repeat(41) }, 'referralFees'],
    [{ quoteId: 5 }, 'quoteId'],
  ])('refuses %j', (patch, field) => {
    expect(refusal(() => validateStatusResponse({ ...status, ...patch }, ctx('status'))).field).toBe(field);
  });
});
