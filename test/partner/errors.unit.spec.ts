import { describe, expect, it } from 'vitest';
import {
  AmountLimitError,
  CurrencyNotFoundError,
  NoDepositWalletError,
  PairNotFoundError,
  PartnerApiError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerResponseError,
  QuoteNotFoundError,
  RateLimitedError,
  RegionRestrictedError,
  SwapNotFoundError,
  partnerErrorFromResponse,
  partnerRetryability,
  type ErrorResponse,
} from '../../src/partner/errors.ts';
import {
  DOCUMENTED_MESSAGE_KEYS,
  MESSAGE_KEY_STATUS,
  type PartnerOperation,
} from '../../src/partner/types.ts';

function map(status: number, body: unknown, extra: Partial<ErrorResponse> = {}) {
  return partnerErrorFromResponse({
    provider: 'p1',
    operation: 'quote' as PartnerOperation,
    status,
    headers: new Headers(),
    bodyText: typeof body === 'string' ? body : JSON.stringify(body),
    ...extra,
  });
}

const CLASS_OF_KEY = {
  FROM_CURRENCY_MINIMUM_AMOUNT_ERROR: [AmountLimitError, 'amount-below-minimum'],
  FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR: [AmountLimitError, 'amount-above-maximum'],
  SWAP_PAIR_NOT_FOUND_ERROR: [PairNotFoundError, 'pair-not-found'],
  REGION_RESTRICTED_ERROR: [RegionRestrictedError, 'region-restricted'],
  CURRENCY_REGION_RESTRICTED_ERROR: [RegionRestrictedError, 'currency-region-restricted'],
  NO_DEPOSIT_WALLET_ERROR: [NoDepositWalletError, 'no-deposit-wallet'],
  CURRENCY_FROM_NOT_FOUND_ERROR: [CurrencyNotFoundError, 'currency-from-not-found'],
  CURRENCY_TO_NOT_FOUND_ERROR: [CurrencyNotFoundError, 'currency-to-not-found'],
  SWAP_QUOTE_NOT_FOUND_ERROR: [QuoteNotFoundError, 'quote-not-found'],
} as const;

describe('partnerErrorFromResponse', () => {
  it.each(DOCUMENTED_MESSAGE_KEYS)('maps %s to its typed error', (key) => {
    const status = MESSAGE_KEY_STATUS[key];
    const e = map(status, { messageKey: key, message: 'why', additionalFields: { extra: 1 } });
    const [cls, kind] = CLASS_OF_KEY[key];
    expect(e).toBeInstanceOf(cls);
    expect(e).toBeInstanceOf(PartnerApiError);
    const api = e as PartnerApiError;
    expect(api.kind).toBe(kind);
    expect(api.messageKey).toBe(key);
    expect(api.partnerMessage).toBe('why');
    expect(api.httpStatus).toBe(status);
    expect(api.additionalFields).toEqual({ extra: 1 });
    expect(api.message).toContain(key);
    expect(api.message).toContain('p1');
  });

  it('reads the amount limits as decimals', () => {
    const e = map(400, {
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      message: 'too small',
      additionalFields: {
        minRequiredAmount: '0.000000000000000001',
        maxRequiredAmount: '123456789.123456789',
      },
    }) as AmountLimitError;
    expect(e.limit).toBe('minimum');
    expect(e.minRequiredAmount?.toFixed()).toBe('0.000000000000000001');
    expect(e.maxRequiredAmount?.toFixed()).toBe('123456789.123456789');
    const max = map(400, {
      messageKey: 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR',
      message: '',
      additionalFields: { minRequiredAmount: 0.1 },
    }) as AmountLimitError;
    expect(max.limit).toBe('maximum');
    expect(max.minRequiredAmount).toBeUndefined(); // a JSON number is not trusted as an amount
    expect(max.maxRequiredAmount).toBeUndefined();
  });

  it('tells which restriction and which currency', () => {
    expect(
      (map(451, { messageKey: 'REGION_RESTRICTED_ERROR', message: '' }) as RegionRestrictedError).restriction,
    ).toBe('ip');
    expect(
      (map(451, { messageKey: 'CURRENCY_REGION_RESTRICTED_ERROR', message: '' }) as RegionRestrictedError)
        .restriction,
    ).toBe('currency');
    expect(
      (map(404, { messageKey: 'CURRENCY_TO_NOT_FOUND_ERROR', message: '' }) as CurrencyNotFoundError).side,
    ).toBe('to');
  });

  it('keeps an undocumented key as a generic API error', () => {
    const e = map(409, { messageKey: 'PARTNER_MAINTENANCE', message: 'back soon', additionalFields: [1] });
    expect(e.constructor).toBe(PartnerApiError);
    expect((e as PartnerApiError).kind).toBe('undocumented');
    expect((e as PartnerApiError).messageKey).toBe('PARTNER_MAINTENANCE');
    expect((e as PartnerApiError).additionalFields).toEqual({});
  });

  it('maps any 404 of /status to SwapNotFoundError, with a {message} body or an ErrorPayload', () => {
    const a = map(404, { message: 'Transaction not found' }, { operation: 'status', swapId: 's-1' });
    expect(a).toBeInstanceOf(SwapNotFoundError);
    expect((a as SwapNotFoundError).swapId).toBe('s-1');
    expect((a as SwapNotFoundError).partnerMessage).toBe('Transaction not found');
    const b = map(
      404,
      { messageKey: 'SWAP_NOT_FOUND', message: 'nope' },
      { operation: 'status', swapId: 's-2' },
    );
    expect(b).toBeInstanceOf(SwapNotFoundError);
    expect((b as SwapNotFoundError).messageKey).toBe('SWAP_NOT_FOUND');
    // Only the interface's JSON body says "not found"; a proxy's HTML 404 is a transport error, retried.
    const html = map(404, '<html>Not Found</html>', { operation: 'status', swapId: 's-3' });
    expect(html).toBeInstanceOf(PartnerHttpError);
    expect(html).not.toBeInstanceOf(SwapNotFoundError);
    expect(partnerRetryability(html)).toEqual({ retryable: true });
    expect(map(404, { error: 'x' }, { operation: 'status', swapId: 's-4' })).toBeInstanceOf(PartnerHttpError);
    expect(partnerRetryability(map(404, { message: 'x' }, { operation: 'quote' }))).toEqual({
      retryable: false,
    });
    // a 404 elsewhere is not a missing swap
    expect(map(404, { message: 'x' }, { operation: 'quote' })).toBeInstanceOf(PartnerHttpError);
  });

  it('parses 420 headers', () => {
    const headers = new Headers({
      'retry-after': '7',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1717245000',
    });
    const e = map(420, { code: 420, message: 'slow down' }, { headers }) as RateLimitedError;
    expect(e).toBeInstanceOf(RateLimitedError);
    expect([e.retryAfterMs, e.limit, e.remaining, e.reset]).toEqual([7000, 100, 0, 1717245000]);
    expect(e.httpStatus).toBe(420);
    const date = map(420, '', {
      headers: new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }),
      now: () => Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'),
    }) as RateLimitedError;
    expect(date.retryAfterMs).toBe(10_000);
    const none = map(420, '', { headers: new Headers({ 'x-ratelimit-limit': 'lots' }) }) as RateLimitedError;
    expect(none.retryAfterMs).toBeUndefined();
    expect(none.limit).toBeUndefined();
  });

  it('keeps a ServerError body, a text body and truncates long bodies', () => {
    const s = map(503, { code: 503, message: 'down' }) as PartnerHttpError;
    expect(s).toBeInstanceOf(PartnerHttpError);
    expect(s.serverError).toEqual({ code: 503, message: 'down' });
    const t = map(502, '<html>bad gateway</html>') as PartnerHttpError;
    expect(t.serverError).toBeUndefined();
    expect(t.body).toBe('<html>bad gateway</html>');
    const long = map(500, 'x'.repeat(5000), { maxBodyChars: 100 }) as PartnerHttpError;
    expect(long.body).toHaveLength(101);
    expect(long.body.endsWith('…')).toBe(true);
    expect(map(418, '')).toBeInstanceOf(PartnerHttpError);
    // an ErrorPayload on a 5xx stays an API error: the key is the most precise information
    expect(map(500, { messageKey: 'INTERNAL', message: '' })).toBeInstanceOf(PartnerApiError);
  });
});

describe('partnerRetryability', () => {
  it('retries network errors, 5xx and 420 only', () => {
    expect(partnerRetryability(new PartnerNetworkError('p', 'status', true, true, new Error('t')))).toEqual({
      retryable: true,
    });
    expect(partnerRetryability(map(503, 'x'))).toEqual({ retryable: true });
    expect(partnerRetryability(map(500, { messageKey: 'INTERNAL', message: '' }))).toEqual({
      retryable: true,
    });
    const rl = map(420, '', { headers: new Headers({ 'retry-after': '2' }) });
    expect(partnerRetryability(rl)).toEqual({ retryable: true, retryAfterMs: 2000 });
    expect(partnerRetryability(map(400, { messageKey: 'NO_DEPOSIT_WALLET_ERROR', message: '' }))).toEqual({
      retryable: false,
    });
    expect(partnerRetryability(map(451, { messageKey: 'REGION_RESTRICTED_ERROR', message: '' }))).toEqual({
      retryable: false,
    });
    expect(partnerRetryability(new PartnerResponseError('p', 'quote', 'amountTo', 'bad'))).toEqual({
      retryable: false,
    });
    expect(partnerRetryability(new Error('bug'))).toEqual({ retryable: false });
  });
});
