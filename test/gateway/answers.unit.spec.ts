import { describe, expect, it } from 'vitest';
import type { SwapCreated } from '../../src/events/types.ts';
import {
  createdSwapAnswer,
  idempotentAnswer,
  outcomeUnknownAnswer,
  partnerFailure,
  partnerOutcome,
} from '../../src/gateway/answers.ts';
import { failureAnswer } from '../../src/gateway/settle.ts';
import {
  PartnerApiError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  RateLimitedError,
} from '../../src/partner/errors.ts';

/** The gateway's HTTP answer table, pure: one row per case, status and reason code. */

const created: SwapCreated = {
  requestId: 'r1',
  request: {
    tradeMethod: 'fixed',
    quoteRef: 'qr',
    quoteId: 'q1',
    amountFrom: null,
    currencyFrom: 'btc',
    currencyTo: 'eth',
    payloadCurrencyFrom: 'BTC',
    payloadCurrencyTo: 'ETH',
    payoutAddress: '0xb794',
    payoutAddressExtraId: null,
    refundAddress: 'bc1q',
    refundAddressExtraId: null,
    nonce: 'ab'.repeat(32),
    slippage: null,
  },
  quote: null,
  payinAddress: 'bc1qpayin',
  createdAt: '2026-11-23T10:00:00.000Z',
  providerFees: '0.1',
  referralFees: '0.01',
  payoutNetworkFees: '0.001',
  providerSigPayload: 'AAAA',
  providerSigSignature: 'BBBB',
  providerSigField: 'signature',
  signatureValid: true,
  keyId: 'k1',
  decodedPayloadJson: JSON.stringify({ payin_extra_id: 'memo-7' }),
  signedAmountToProvider: '1',
  signedAmountToWallet: '2',
  findings: [{ check: 'payload.nonce', outcome: 'ok', expected: null, actual: null, detail: null }],
  extraFieldsJson: null,
};
const finding = (check: string, outcome: string, detail: string | null = null) => ({
  check,
  outcome,
  expected: null,
  actual: null,
  detail,
});

describe('createdSwapAnswer', () => {
  it.each([
    ['a verified, matching payload', created, 201, undefined],
    ['an invalid signature', { ...created, signatureValid: false }, 502, 'payload_mismatch'],
    [
      'a payload mismatch',
      { ...created, findings: [finding('payload.amount_to_provider', 'mismatch')] },
      502,
      'payload_mismatch',
    ],
    [
      'a format violation',
      { ...created, findings: [finding('signature.encoding', 'violation')] },
      502,
      'payload_mismatch',
    ],
    [
      'an unverifiable check',
      { ...created, findings: [finding('payload.amount_to_provider', 'unverifiable')] },
      201,
      undefined,
    ],
    [
      'a quote.amount_to difference (a finding only)',
      { ...created, findings: [finding('quote.amount_to', 'mismatch')] },
      201,
      undefined,
    ],
  ] as const)('%s: %i', (_, c, status, reason) => {
    const a = createdSwapAnswer('p1', 's1', c as SwapCreated);
    expect(a.status).toBe(status);
    expect(a.reason).toBe(reason);
    expect(a.body.swapId).toBe('s1');
  });

  it('201 carries what the wallet hands out', () => {
    expect(createdSwapAnswer('p1', 's1', created).body).toMatchObject({
      requestId: 'r1',
      providerId: 'p1',
      payinAddress: 'bc1qpayin',
      payinExtraId: 'memo-7',
      providerSig: { payload: 'AAAA', signature: 'BBBB' },
      providerFees: '0.1',
    });
  });

  it('a fee with a response.fee_format finding is null, not the stand-in', () => {
    const c = {
      ...created,
      providerFees: '0',
      findings: [finding('response.fee_format', 'unverifiable', 'providerFees is not decimal text: …')],
    };
    const body = createdSwapAnswer('p1', 's1', c).body;
    expect(body.providerFees).toBeNull();
    expect(body.referralFees).toBe('0.01');
  });
});

describe('partner failures', () => {
  it.each([
    [
      new PartnerApiError('p', 'swap-fixed', 404, 'SWAP_QUOTE_NOT_FOUND_ERROR', 'gone', {}),
      404,
      'partner:quote-not-found',
      'partner_error',
    ],
    [new PartnerApiError('p', 'swap-fixed', 500, 'X', 'x', {}), 502, 'partner:undocumented', 'partner_error'],
    [new RateLimitedError('p', 'quote', 2500, 1, 0, 1, ''), 503, 'partner:rate_limited', 'partner_error'],
    [
      new PartnerNetworkError('p', 'swap-float', true, true, new Error('t')),
      504,
      'partner:outcome_unknown',
      'outcome_unknown',
    ],
    [
      new PartnerNetworkError('p', 'swap-float', false, false, new Error('r')),
      502,
      'partner:unreachable',
      'partner_error',
    ],
    [
      new PartnerResponseError('p', 'swap-float', 'swapId', 'bad'),
      502,
      'partner:invalid_response',
      'invalid_response',
    ],
    [new PartnerRequestError('p', 'swap-float', 'nonce', 'bad'), 400, 'invalid_body', 'partner_error'],
    [
      new PartnerHttpError('p', 'swap-float', 503, 'x', undefined),
      502,
      'partner:http_error',
      'partner_error',
    ],
  ] as const)('%s: %i %s', (e, status, reason, kind) => {
    const f = partnerFailure(e);
    expect(f.answer.status).toBe(status);
    expect(f.answer.reason).toBe(reason);
    expect(f.kind).toBe(kind);
  });

  it('rate limiting answers Retry-After in whole seconds', () => {
    expect(partnerFailure(new RateLimitedError('p', 'quote', 2500, 1, 0, 1, '')).answer.headers).toEqual({
      'retry-after': '3',
    });
  });

  it('partner text in an answer is made visible (it is stored as jsonb)', () => {
    const f = partnerFailure(
      new PartnerApiError('p', 'quote', 400, 'K\u0000', 'bad\u0000thing', { 'a\u0000': 'b' }),
    );
    // As JSON, no `\u0000` escape (which Postgres refuses in jsonb); the visible text `\\u0000` instead.
    expect(JSON.stringify(f)).not.toMatch(/(^|[^\\])\\u0000/);
    expect(f.answer.body.error).toBe('bad\\u0000thing');
  });

  it.each([
    [new PartnerNetworkError('p', 'swap-float', true, true, new Error('t')), 'outcome-unknown'],
    [new PartnerResponseError('p', 'swap-float', '', 'x'), 'invalid-response'],
    [new Error('boom'), 'exception'],
  ])('metric outcome of %s: %s', (e, outcome) => {
    expect(partnerOutcome(e)).toBe(outcome);
  });

  it('a recorded failure: 504 when the outcome is unknown, 502 otherwise', () => {
    const base = { requestId: 'r', httpStatus: null, errorKey: null, message: 'm' };
    expect(failureAnswer({ ...base, kind: 'outcome_unknown' }).status).toBe(504);
    expect(failureAnswer({ ...base, kind: 'partner_error' })).toMatchObject({
      status: 502,
      body: { error: 'the swap was not created: m', requestId: 'r' },
    });
  });
});

describe('idempotency answers', () => {
  it.each([
    [{ kind: 'new' } as const, 409, 'idempotency_in_progress'],
    [{ kind: 'mismatch', requestId: 'r' } as const, 422, 'idempotency_mismatch'],
    [{ kind: 'in_progress', requestId: 'r' } as const, 409, 'idempotency_in_progress'],
    [{ kind: 'lease_expired', requestId: 'r', ageMs: 5 } as const, 409, 'idempotency_outcome_unknown'],
    [{ kind: 'replay', requestId: 'r', status: 201, body: { swapId: 's' } } as const, 201, undefined],
  ])('%j: %i', (d, status, reason) => {
    const a = idempotentAnswer(d);
    expect(a.status).toBe(status);
    expect(a.reason).toBe(reason);
  });

  it('outcome unknown names the request and the command that settles it', () => {
    const a = outcomeUnknownAnswer('r9', 'why');
    expect(a.body).toMatchObject({ requestId: 'r9', outcome: 'unknown' });
    expect(a.body.error).toContain('swap-ledger requests resolve r9');
  });
});
