import { describe, expect, it } from 'vitest';
import {
  checkPayloadAgainstSwap,
  decodeSwapPayload,
  type Finding,
  type SwapContext,
} from '../../src/payload/index.ts';
import { NONCE, R1, SIGNED, VECTOR, VECTOR_SWAP } from '../fixtures/payload/vectors.ts';

const vector = decodeSwapPayload(VECTOR.payload);
const float: SwapContext = {
  request: VECTOR_SWAP.floatRequest,
  response: VECTOR_SWAP.response,
  tradeMethod: 'float',
};
const fixed: SwapContext = {
  request: VECTOR_SWAP.fixedRequest,
  response: VECTOR_SWAP.response,
  quote: VECTOR_SWAP.quote,
  tradeMethod: 'fixed',
};
const problems = (findings: Finding[]) => findings.filter((f) => f.outcome !== 'ok');
const CHECKS = [
  'payload.currency_from',
  'payload.currency_to',
  'payload.device_transaction_id_ng',
  'payload.payout_address',
  'payload.payout_extra_id',
  'payload.refund_address',
  'payload.refund_extra_id',
  'payload.payin_address',
  'payload.amount_to_provider',
];

describe('checkPayloadAgainstSwap', () => {
  it('finds the vector consistent with its float swap, every check reported', () => {
    const findings = checkPayloadAgainstSwap(vector, float);
    expect(findings.map((f) => f.check)).toEqual(CHECKS);
    expect(problems(findings)).toEqual([]);
    expect(findings.at(-1)).toEqual({
      check: 'payload.amount_to_provider',
      outcome: 'ok',
      expected: '1150',
      actual: '1150',
      detail: 'request amount 0.0000115 BTC at 8 decimals, in atomic units',
    });
  });

  it("finds the vector consistent with its fixed swap through the quote's amount echo (upper-case nonce)", () => {
    const findings = checkPayloadAgainstSwap(vector, fixed);
    expect(problems(findings)).toEqual([]);
    expect(findings.find((f) => f.check === 'payload.amount_to_provider')?.detail).toMatch(
      /^quote amount 0.00001150 BTC/,
    );
  });

  it.each([
    ['payload.currency_from', { request: { ...float.request, payloadCurrencyFrom: 'LTC' } }, 'LTC', 'BTC'],
    ['payload.currency_to', { request: { ...float.request, payloadCurrencyTo: 'ETH' } }, 'ETH', 'BAT'],
    [
      'payload.device_transaction_id_ng',
      { request: { ...float.request, nonce: NONCE } },
      NONCE,
      VECTOR.fields.device_transaction_id_ng,
    ],
    [
      'payload.payout_address',
      { request: { ...float.request, payoutAddress: '0x0000000000000000000000000000000000000001' } },
      '0x0000000000000000000000000000000000000001',
      VECTOR.fields.payout_address,
    ],
    ['payload.payout_extra_id', { request: { ...float.request, payoutAddressExtraId: '42' } }, '42', ''],
    [
      'payload.refund_address',
      { request: { ...float.request, refundAddress: 'bc1qother' } },
      'bc1qother',
      VECTOR.fields.refund_address,
    ],
    ['payload.refund_extra_id', { request: { ...float.request, refundAddressExtraId: '9' } }, '9', ''],
    [
      'payload.payin_address',
      { response: { payinAddress: 'bc1qdeposit' } },
      'bc1qdeposit',
      VECTOR.fields.payin_address,
    ],
    ['payload.amount_to_provider', { request: { ...float.request, amount: '0.0000116' } }, '1160', '1150'],
  ] as const)('reports a %s mismatch with expected and actual', (check, change, expected, actual) => {
    const findings = checkPayloadAgainstSwap(vector, { ...float, ...change });
    expect(problems(findings)).toEqual([
      expect.objectContaining({ check, outcome: 'mismatch', expected, actual }),
    ]);
  });

  it('reports a fixed amount mismatch against the quote echo', () => {
    const findings = checkPayloadAgainstSwap(vector, { ...fixed, quote: { amount: '0.00002' } });
    expect(problems(findings)).toEqual([
      expect.objectContaining({
        check: 'payload.amount_to_provider',
        outcome: 'mismatch',
        expected: '2000',
        actual: '1150',
      }),
    ]);
  });

  it('compares absent extra ids as empty strings, and present ones exactly', () => {
    const decoded = decodeSwapPayload(R1.payload); // refund_extra_id "7007", payout_extra_id ""
    const request = {
      payloadCurrencyFrom: 'ETH',
      payloadCurrencyTo: 'BTC',
      nonce: NONCE,
      payoutAddress: 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh',
      refundAddress: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY',
      refundAddressExtraId: '7007',
      payoutAddressExtraId: null,
      amount: '1.5',
    };
    const response = { payinAddress: '0x1111111111111111111111111111111111111111' };
    expect(problems(checkPayloadAgainstSwap(decoded, { request, response, tradeMethod: 'float' }))).toEqual(
      [],
    );
    const { refundAddressExtraId: _, ...withoutRefundMemo } = request;
    expect(
      problems(
        checkPayloadAgainstSwap(decoded, { request: withoutRefundMemo, response, tradeMethod: 'float' }),
      ),
    ).toEqual([{ check: 'payload.refund_extra_id', outcome: 'mismatch', expected: '', actual: '7007' }]);
  });

  it('says when addresses differ only in letter case, still a mismatch', () => {
    const request = { ...float.request, payoutAddress: '0xB794F5eA0ba39494cE839613fffBA74279579268' };
    expect(problems(checkPayloadAgainstSwap(vector, { ...float, request }))).toEqual([
      expect.objectContaining({
        check: 'payload.payout_address',
        outcome: 'mismatch',
        detail: 'differs only in letter case',
      }),
    ]);
  });

  it('reports a request nonce that is not hex as a mismatch', () => {
    const findings = checkPayloadAgainstSwap(vector, {
      ...float,
      request: { ...float.request, nonce: 'not-hex' },
    });
    expect(problems(findings)).toEqual([
      expect.objectContaining({
        check: 'payload.device_transaction_id_ng',
        outcome: 'mismatch',
        detail: 'the request nonce is not hex',
      }),
    ]);
  });

  describe('amount_to_provider is unverifiable, not a mismatch, when', () => {
    const amountFinding = (context: SwapContext, magnitudes?: (id: string) => number | undefined) =>
      checkPayloadAgainstSwap(vector, context, magnitudes).find(
        (f) => f.check === 'payload.amount_to_provider',
      );

    it.each([
      [
        'the fixed quote carries no amount',
        { ...fixed, quote: { ...VECTOR_SWAP.quote, amount: undefined } },
        'the fixed quote carries no amount echo',
      ],
      [
        'the fixed quote amount is null',
        { ...fixed, quote: { amount: null } },
        'the fixed quote carries no amount echo',
      ],
      [
        'no quote is given for a fixed swap',
        { ...fixed, quote: undefined },
        'no quote given for the fixed swap',
      ],
      [
        'the float request has no amount',
        { ...float, request: { ...float.request, amount: undefined } },
        'the float request carries no amount',
      ],
      [
        'the request amount has more decimals than the currency',
        { ...float, request: { ...float.request, amount: '0.000011501' } },
        /request amount: .*more than 8 significant decimal places/,
      ],
      [
        'the request amount is negative',
        { ...float, request: { ...float.request, amount: '-0.0000115' } },
        /is negative/,
      ],
    ] as const)('%s', (_, context, detail) => {
      expect(amountFinding(context as SwapContext)).toMatchObject({
        outcome: 'unverifiable',
        actual: '1150',
        detail: expect.stringMatching(detail),
      });
    });

    it('the currency has no known decimals', () => {
      expect(amountFinding(float, () => undefined)).toEqual({
        check: 'payload.amount_to_provider',
        outcome: 'unverifiable',
        actual: '1150',
        detail: 'no decimals known for platform currency "BTC"',
      });
    });
  });

  it('uses the given magnitudes instead of the platform table', () => {
    const findings = checkPayloadAgainstSwap(
      vector,
      { ...float, request: { ...float.request, amount: '11.5' } },
      (id) => (id === 'BTC' ? 2 : undefined),
    );
    expect(problems(findings)).toEqual([]);
  });

  it('compares amounts above 2^64 exactly', () => {
    const decoded = decodeSwapPayload(SIGNED.bigAmounts.payload); // 2^64 + 1 wei
    const request = { ...float.request, payloadCurrencyFrom: 'ETH', amount: '18.446744073709551617' };
    const amount = (a: string) =>
      checkPayloadAgainstSwap(decoded, { ...float, request: { ...request, amount: a } }).find(
        (f) => f.check === 'payload.amount_to_provider',
      );
    expect(amount('18.446744073709551617')).toMatchObject({
      outcome: 'ok',
      expected: '18446744073709551617',
    });
    // One wei less: a JS number could not tell these apart.
    expect(amount('18.446744073709551616')).toMatchObject({
      outcome: 'mismatch',
      expected: '18446744073709551616',
    });
  });
});
