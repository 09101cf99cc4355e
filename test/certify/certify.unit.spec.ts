import { describe, expect, it } from 'vitest';
import { certifyArgs } from '../../src/cli/commands/partner.ts';
import { UsageError } from '../../src/cli/command.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { apiKeyDigest } from '../../src/providers/api-keys.ts';
import {
  currencyProblems,
  cursorProblems,
  pageProblems,
  pairProblems,
  unknownPairCurrencyProblems,
  unmappedProblems,
} from '../../src/certify/catalog.ts';
import type { SwapSeen } from '../../src/certify/context.ts';
import type { Exchange } from '../../src/certify/http.ts';
import {
  aboveMaximum,
  belowMinimum,
  choosePairs,
  errorAnswerProblems,
  expiryProblems,
  quoteBodyProblems,
  typicalAmount,
} from '../../src/certify/quote.ts';
import { consoleLines, htmlReport, markdownReport, reportFormatOf } from '../../src/certify/report.ts';
import { Requirement } from '../../src/certify/requirement.ts';
import { rateLimitProblems, slowCallProblems, type CertifyReport } from '../../src/certify/run.ts';
import {
  finalFieldProblems,
  finalFigureProblems,
  statusDecimalProblems,
  statusMappingProblem,
} from '../../src/certify/status.ts';
import {
  feeEchoProblems,
  findingProblem,
  newSwapIdProblems,
  signatureFieldProblem,
  swapResponseProblems,
  walletAmountProblem,
} from '../../src/certify/swaps.ts';
import { keyMatches, webhookBodyProblems } from '../../src/certify/webhook.ts';
import { encodeSwapPayload, toPaddedBase64url } from '../../src/simulator/index.ts';

/** Pure requirement logic of `partner certify`: no socket, no clock beyond the `now` given. */

function exchange(status: number | undefined, body: unknown, extra: Partial<Exchange> = {}): Exchange {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    method: 'GET',
    target: '/x',
    ...(status !== undefined ? { status } : { error: 'no answer: ECONNRESET' }),
    responseHeaders: {},
    responseExcerpt: text,
    ms: 5,
    json,
    text,
    ...extra,
  };
}

const what = (ps: readonly { what: string; verdict: string }[]) => ps.map((p) => `${p.verdict} ${p.what}`);

describe('catalog rules', () => {
  it('a page needs 200, the array and next_cursor (string or null)', () => {
    expect(pageProblems(exchange(200, { currencies: [], next_cursor: null }), 'currencies')).toEqual([]);
    expect(what(pageProblems(exchange(200, { currencies: [] }), 'currencies'))).toEqual(['FAIL next_cursor']);
    expect(what(pageProblems(exchange(200, { currencies: {}, next_cursor: '' }), 'currencies'))).toEqual([
      'FAIL currencies of the page',
      'FAIL next_cursor',
    ]);
    expect(pageProblems(exchange(500, { code: 500 }), 'pairs')[0]).toMatchObject({
      verdict: 'FAIL',
      actual: 'HTTP 500',
    });
    expect(pageProblems(exchange(200, '<html>'), 'pairs')[0]!.actual).toBe(
      'a body that is not a JSON object',
    );
    expect(pageProblems(exchange(undefined, undefined), 'pairs')[0]!.actual).toMatch(/ECONNRESET/);
  });

  it('cursor rules: no repeat, limit honoured, null ends', () => {
    const ok = [
      { cursor: undefined, items: 2, next: 'a' },
      { cursor: 'a', items: 1, next: null },
    ];
    expect(cursorProblems(ok, 2, true)).toEqual([]);
    expect(what(cursorProblems(ok, 1, true))).toEqual(['FAIL items on page 1']);
    const repeat = [
      { cursor: undefined, items: 2, next: 'a' },
      { cursor: 'a', items: 2, next: 'a' },
    ];
    expect(cursorProblems(repeat, 2, true)[0]).toMatchObject({
      what: 'next_cursor of page 2',
      actual: '"a" again',
    });
    expect(what(cursorProblems(ok.slice(0, 1), 2, false))).toEqual(['FAIL end of the list']);
  });

  it('currency rules reuse the client validator, one problem per bad item, with its index', () => {
    const problems = currencyProblems(
      [
        { id: 'btc', type: 'coin', blockchain: 'bitcoin' },
        { id: 'usdt', type: 'token', chainId: 1, contract: '0xdac1' },
        { id: 'eth', type: 'coin', chainId: 1, contract: '0xabc' },
        { id: 'x', type: 'nft', blockchain: 'b' },
        { id: 'y', type: 'coin' },
        { id: 'btc', type: 'coin', blockchain: 'bitcoin' },
      ],
      'p',
    );
    expect(problems.map((p) => [p.index, p.what])).toEqual([
      [2, 'currencies[2].contract'],
      [3, 'currencies[3].type'],
      [4, 'currencies[4].blockchain'],
      [5, 'currencies[5].id'],
    ]);
  });

  it('pair rules: decimals as strings, min < max (equal warns), methods, duplicates warn', () => {
    const pair = { from: 'btc', to: 'eth', tradeMethod: ['fixed'], minSwapAmount: '0.1', maxSwapAmount: '2' };
    expect(pairProblems([pair], 'p')).toEqual([]);
    const problems = pairProblems(
      [
        { ...pair, minSwapAmount: 0.1 },
        { ...pair, maxSwapAmount: '0.01' },
        { ...pair, tradeMethod: ['swap'] },
        { ...pair, to: 'ltc', maxSwapAmount: '0.1' },
        pair,
        pair,
      ],
      'p',
    );
    expect(problems.map((p) => `${p.verdict} ${p.index}`)).toEqual([
      'FAIL 0',
      'FAIL 1',
      'FAIL 2',
      'WARN 3',
      'WARN 5',
    ]);
    expect(problems[0]!.actual).toMatch(/the number 0.1/);
  });

  it('every currency maps to a platform id; pairs name listed currencies', () => {
    const currencies = [{ id: 'btc' }, { id: 'doge' }];
    expect(unmappedProblems(currencies, { btc: 'BTC' })[0]!.actual).toBe('unmapped: doge');
    expect(unmappedProblems(currencies, { btc: 'BTC', doge: 'DOGE' })).toEqual([]);
    expect(what(unknownPairCurrencyProblems([{ from: 'btc', to: 'xmr' }], currencies))).toEqual([
      'FAIL pairs[0].to',
    ]);
  });
});

describe('quote rules', () => {
  const fixed = {
    quoteId: 'q1',
    amount: '0.5',
    amountTo: '10.1',
    providerFees: '0.1',
    referralFees: '0.05',
    payoutNetworkFees: '0.01',
    tradeMethod: 'fixed',
    expiry: '2026-01-01T00:10:00+0000',
  };

  it('a fixed quote carries quoteId, decimal strings, the amount echo and ratios', () => {
    expect(quoteBodyProblems(fixed, 'fixed', '0.50')).toEqual([]);
    expect(what(quoteBodyProblems({ ...fixed, quoteId: '' }, 'fixed', '0.5'))).toEqual(['FAIL quoteId']);
    expect(quoteBodyProblems({ ...fixed, providerFees: 0.1 }, 'fixed', '0.5')[0]!.actual).toBe(
      'the JSON number 0.1',
    );
    expect(what(quoteBodyProblems({ ...fixed, amount: '0.6' }, 'fixed', '0.5'))).toEqual([
      'FAIL amount (echo)',
    ]);
    expect(what(quoteBodyProblems({ ...fixed, defaultSlippage: '1.5' }, 'fixed', '0.5'))).toEqual([
      'FAIL defaultSlippage',
    ]);
    expect(
      what(quoteBodyProblems({ ...fixed, tradeMethod: 'float', quoteId: undefined }, 'float', '0.5')),
    ).toEqual([]);
  });

  it('tradeMethod: required as fixed or float; another method than asked is a WARN (QuoteRequest has none)', () => {
    // Issue 34 point 9: a float quote answered "fixed" failed quote.float, though the interface's
    // QuoteRequest defines no tradeMethod; it is judged by the method it answered.
    expect(what(quoteBodyProblems(fixed, 'float', '0.5'))).toEqual(['WARN tradeMethod']);
    expect(quoteBodyProblems(fixed, 'float', '0.5')[0]!.expected).toMatch(
      /QuoteRequest defines no tradeMethod/,
    );
    expect(
      what(quoteBodyProblems({ ...fixed, tradeMethod: 'float', quoteId: undefined }, 'fixed', '0.5')),
    ).toEqual(['WARN tradeMethod']);
    // Answered fixed, it must carry its quoteId whatever was asked.
    expect(what(quoteBodyProblems({ ...fixed, quoteId: undefined }, 'float', '0.5'))).toEqual([
      'WARN tradeMethod',
      'FAIL quoteId',
    ]);
    // The response's own field is required by the interface.
    for (const bad of [undefined, null, 'swap', 'FIXED', 1])
      expect(what(quoteBodyProblems({ ...fixed, tradeMethod: bad }, 'fixed', '0.5')), String(bad)).toEqual([
        'FAIL tradeMethod',
      ]);
  });

  it('expiry: documented shape, other ISO shapes warn, validity at least the minimum', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(expiryProblems('2026-01-01T00:10:00+0000', now, 60_000)).toEqual([]);
    expect(what(expiryProblems('2026-01-01T00:10:00Z', now, 60_000))).toEqual(['WARN expiry shape']);
    expect(expiryProblems('2026-01-01T00:00:30+0000', now, 60_000)[0]).toMatchObject({
      verdict: 'FAIL',
      what: 'quote validity',
      actual: expect.stringMatching(/^30 s/),
    });
    expect(what(expiryProblems('tomorrow', now, 60_000))).toEqual(['FAIL expiry']);
    expect(what(expiryProblems(undefined, now, 60_000))).toEqual(['FAIL expiry']);
  });

  it('error answers: status, messageKey, message, decimal additionalFields', () => {
    const body = {
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      message: 'too small',
      additionalFields: { minRequiredAmount: '0.1', maxRequiredAmount: '2' },
    };
    const fields = ['minRequiredAmount', 'maxRequiredAmount'];
    expect(errorAnswerProblems(exchange(400, body), 400, body.messageKey, fields)).toEqual([]);
    expect(errorAnswerProblems(exchange(422, body), 400, body.messageKey)[0]!.actual).toMatch(/^HTTP 422/);
    expect(
      what(errorAnswerProblems(exchange(400, { ...body, messageKey: 'MIN' }), 400, body.messageKey)),
    ).toEqual(['FAIL messageKey']);
    expect(
      what(errorAnswerProblems(exchange(400, { ...body, message: undefined }), 400, body.messageKey)),
    ).toEqual(['WARN message']);
    expect(
      what(
        errorAnswerProblems(
          exchange(400, { ...body, additionalFields: { minRequiredAmount: 0.1 } }),
          400,
          body.messageKey,
          fields,
        ),
      ),
    ).toEqual(['FAIL additionalFields.minRequiredAmount', 'FAIL additionalFields.maxRequiredAmount']);
    expect(what(errorAnswerProblems(exchange(404, 'not found'), 404, 'SWAP_PAIR_NOT_FOUND_ERROR'))).toEqual([
      'FAIL error body',
    ]);
  });

  it('amounts inside and outside the limits, at the platform decimals', () => {
    const pair = {
      from: 'btc',
      to: 'eth',
      tradeMethod: ['fixed' as const],
      minSwapAmount: '0.0002',
      maxSwapAmount: '5',
    };
    expect(typicalAmount(pair, 8)).toBe('0.0004');
    expect(typicalAmount({ ...pair, maxSwapAmount: '0.0003' }, 8)).toBe('0.00025');
    expect(belowMinimum(pair, 8)).toBe('0.0001');
    expect(belowMinimum({ ...pair, minSwapAmount: '0.00000001' }, 8)).toBeUndefined();
    expect(aboveMaximum(pair)).toBe('10');
  });

  it('pairs to quote: mapped ones first, fixed and float on the same pair when it offers both', () => {
    const pairs = [
      { from: 'doge', to: 'btc', tradeMethod: ['fixed', 'float'], minSwapAmount: '1', maxSwapAmount: '9' },
      { from: 'btc', to: 'eth', tradeMethod: ['fixed', 'float'], minSwapAmount: '1', maxSwapAmount: '9' },
      { from: 'btc', to: 'xrp', tradeMethod: ['float'], minSwapAmount: '1', maxSwapAmount: '9' },
    ];
    const map = { btc: 'BTC', eth: 'ETH', xrp: 'XRP' };
    const both = choosePairs(pairs, map, undefined);
    expect([both.fixed?.pair.to, both.float?.pair.to, both.fixed?.platformFrom]).toEqual([
      'eth',
      'eth',
      'BTC',
    ]);
    const asked = choosePairs(pairs, map, [
      { from: 'btc', to: 'xrp' },
      { from: 'a', to: 'b' },
    ]);
    expect([asked.fixed, asked.float?.pair.to, asked.missing]).toEqual([undefined, 'xrp', ['a/b']]);
  });
});

describe('swap rules', () => {
  const swap = {
    swapId: 's1',
    payinAddress: 'bc1q',
    createdAt: '2026-01-01T00:00:00Z',
    providerFees: '0.1',
    referralFees: '0.05',
    payoutNetworkFees: '0.01',
    providerSig: { payload: 'AA==', signature: 'sig' },
  };

  it('a SwapResponse: ids, createdAt, decimal fees, providerSig with a signature field', () => {
    expect(swapResponseProblems(swap)).toEqual([]);
    expect(what(swapResponseProblems({ ...swap, swapId: '', createdAt: 'now', providerFees: 1 }))).toEqual([
      'FAIL swapId',
      'FAIL createdAt',
      'FAIL providerFees',
    ]);
    expect(what(swapResponseProblems({ ...swap, providerSig: { payload: 'AA==' } }))).toEqual([
      'FAIL providerSig.signature',
    ]);
    expect(
      swapResponseProblems({ ...swap, providerSig: { payload: 'AA==', payload_signature: 's' } }),
    ).toEqual([]);
  });

  it('a second call on the same quoteId needs a new swapId', () => {
    expect(newSwapIdProblems(['a', 'b'], 'c')).toEqual([]);
    expect(newSwapIdProblems(['a', 'b'], 'a')[0]).toMatchObject({ verdict: 'FAIL', actual: 'a again' });
  });

  it('signature field: payload_signature alone warns, two different values fail', () => {
    expect(signatureFieldProblem({ payload: 'p', signature: 's' }, 'x')).toBeUndefined();
    expect(signatureFieldProblem({ payload: 'p', payload_signature: 's' }, 'x')?.verdict).toBe('WARN');
    expect(
      signatureFieldProblem({ payload: 'p', signature: 's', payload_signature: 's' }, 'x'),
    ).toBeUndefined();
    expect(
      signatureFieldProblem({ payload: 'p', signature: 's', payload_signature: 't' }, 'x')?.verdict,
    ).toBe('FAIL');
  });

  it('findings of src/payload: mismatch and violation fail, unverifiable warns, ok is nothing', () => {
    expect(findingProblem({ check: 'payload.currency_from', outcome: 'ok' }, 's')).toBeUndefined();
    expect(
      findingProblem(
        { check: 'payload.currency_from', outcome: 'mismatch', expected: 'BTC', actual: 'ETH' },
        's',
      ),
    ).toMatchObject({
      verdict: 'FAIL',
      what: 's: payload.currency_from',
      expected: 'BTC',
      actual: 'ETH',
    });
    expect(findingProblem({ check: 'signature.verify', outcome: 'violation' }, 's')?.verdict).toBe('FAIL');
    expect(
      findingProblem({ check: 'payload.amount_to_provider', outcome: 'unverifiable', detail: 'no echo' }, 's')
        ?.what,
    ).toBe('s: payload.amount_to_provider (no echo)');
  });

  it('amount_to_wallet is quote amountTo + payoutNetworkFees in atomic units; float differences only warn', () => {
    const quote = { amountTo: '1.5', payoutNetworkFees: '0.0001' };
    expect(walletAmountProblem(150010000n, quote, 'BTC', 'fixed', 's')).toBeUndefined();
    expect(walletAmountProblem(150010001n, quote, 'BTC', 'fixed', 's')).toMatchObject({
      verdict: 'FAIL',
      actual: '150010001',
    });
    expect(walletAmountProblem(150010001n, quote, 'BTC', 'float', 's')?.verdict).toBe('WARN');
    expect(walletAmountProblem(1n, { amountTo: 1.5 }, 'BTC', 'fixed', 's')).toBeUndefined();
    expect(walletAmountProblem(1n, quote, 'NOPE', 'fixed', 's')).toBeUndefined();
  });

  it('fees echo the quote (compared as decimals); float differences warn', () => {
    const quote = { providerFees: '0.10', referralFees: '0.05', payoutNetworkFees: '0.01' };
    expect(feeEchoProblems(swap, quote, 'fixed', 's')).toEqual([]);
    expect(what(feeEchoProblems({ ...swap, referralFees: '0.04' }, quote, 'fixed', 's'))).toEqual([
      'FAIL s: referralFees',
    ]);
    expect(what(feeEchoProblems({ ...swap, referralFees: '0.04' }, quote, 'float', 's'))).toEqual([
      'WARN s: referralFees',
    ]);
    expect(feeEchoProblems({ ...swap, referralFees: 0.04 }, quote, 'fixed', 's')).toEqual([]);
  });
});

describe('status rules', () => {
  const mapping = buildStatusMapping({ success: 'FINISHED' });
  const status = {
    status: 'PENDING',
    amount: '',
    payinTransactionId: '',
    payoutTransactionId: '',
    providerFees: '0.1',
    referralFees: '0',
    payoutNetworkFees: '0.01',
  };

  it('decimal strings: amount only when known, fees always', () => {
    expect(statusDecimalProblems(status)).toEqual([]);
    expect(statusDecimalProblems({ ...status, amount: null })).toEqual([]);
    expect(
      what(statusDecimalProblems({ ...status, amount: 'n/a', providerFees: 0.1, referralFees: undefined })),
    ).toEqual(['FAIL amount', 'FAIL providerFees', 'FAIL referralFees']);
  });

  it('the status string goes through the provider mapping', () => {
    expect(statusMappingProblem('success', mapping)).toBeUndefined();
    expect(statusMappingProblem('FINISHED', mapping)).toBeUndefined();
    expect(statusMappingProblem('EXCHANGING', mapping)?.actual).toBe('"EXCHANGING"');
    expect(statusMappingProblem(3, mapping)?.expected).toBe('a string');
  });

  it('a FINISHED swap carries its amount and both hashes; REFUNDED its amount', () => {
    expect(what(finalFieldProblems(status, 'FINISHED'))).toEqual([
      'FAIL amount of a FINISHED swap',
      'FAIL payinTransactionId of a FINISHED swap',
      'FAIL payoutTransactionId of a FINISHED swap',
    ]);
    expect(finalFieldProblems({ ...status, amount: '0' }, 'REFUNDED')).toEqual([]);
  });

  it('final figures: fees as at creation, a fixed final amount at least signed minus the network fee', () => {
    const payload = toPaddedBase64url(
      encodeSwapPayload({
        payin_address: 'a',
        refund_address: 'b',
        payout_address: 'c',
        currency_from: 'ETH',
        currency_to: 'BTC',
        amount_to_provider: 1n,
        amount_to_wallet: 150010000n, // 1.5001 BTC, network fee 0.0001 included
        device_transaction_id_ng: new Uint8Array(32),
      }),
    );
    const seen = {
      tradeMethod: 'fixed',
      swapId: 's',
      request: { payloadCurrencyTo: 'BTC' },
      body: { providerFees: '0.1', referralFees: '0', payoutNetworkFees: '0.0001', providerSig: { payload } },
      signedOk: true,
    } as unknown as SwapSeen;
    const final = {
      ...status,
      status: 'FINISHED',
      amount: '1.5',
      providerFees: '0.1',
      payoutNetworkFees: '0.0001',
    };
    expect(finalFigureProblems(final, seen, 'FINISHED')).toEqual([]);
    expect(what(finalFigureProblems({ ...final, amount: '1.49999999' }, seen, 'FINISHED'))).toEqual([
      'FAIL final amount',
    ]);
    expect(
      what(finalFigureProblems({ ...final, amount: '1.4' }, { ...seen, tradeMethod: 'float' }, 'FINISHED')),
    ).toEqual(['WARN final amount']);
    expect(what(finalFigureProblems({ ...final, providerFees: '0.2' }, seen, 'FINISHED'))).toEqual([
      'FAIL final providerFees',
    ]);
    // Not held against a signature that did not verify, nor judged before FINISHED.
    expect(finalFigureProblems({ ...final, amount: '1' }, { ...seen, signedOk: false }, 'FINISHED')).toEqual(
      [],
    );
    expect(finalFigureProblems({ ...final, amount: '1' }, seen, 'REFUNDED')).toEqual([]);
  });
});

describe('webhook rules', () => {
  const mapping = buildStatusMapping({ success: 'FINISHED' });
  it('key by digest, providerId, amount present, status mappable', () => {
    const digest = apiKeyDigest('slk_k1').toString('hex');
    expect(keyMatches('slk_k1', [digest])).toBe(true);
    expect(keyMatches('slk_k2', [digest])).toBe(false);
    expect(keyMatches(undefined, [digest])).toBe(false);
    const ok = webhookBodyProblems(
      { providerId: 'p', providerStatus: 'success', amount: '1.2' },
      'p',
      mapping,
    );
    expect([...ok.providerId, ...ok.amount, ...ok.status]).toEqual([]);
    const bad = webhookBodyProblems(
      { providerId: 'q', providerStatus: 'done', providerFees: 1 },
      'p',
      mapping,
    );
    expect([what(bad.providerId), what(bad.amount), what(bad.status)]).toEqual([
      ['FAIL providerId'],
      ['FAIL amount', 'FAIL providerFees'],
      ['FAIL providerStatus'],
    ]);
  });
});

describe('http rules', () => {
  it('slow calls and rate-limit headers', () => {
    const fast = exchange(200, {}, { ms: 100 });
    const slow = exchange(200, {}, { ms: 6000, target: '/quote' });
    expect(slowCallProblems([fast, slow], 5000).map((p) => p.actual)).toEqual(['6000 ms']);
    const all = {
      'retry-after': '1',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '9',
    };
    expect(rateLimitProblems([exchange(420, {}, { responseHeaders: all }), exchange(200, {})])).toEqual([]);
    const { 'retry-after': _r, ...noRetry } = all;
    expect(rateLimitProblems([exchange(429, {}, { responseHeaders: noRetry })])[0]!.actual).toBe(
      'missing retry-after',
    );
  });
});

describe('requirement verdicts and reports', () => {
  it('the worst check wins; no check is SKIP with its reason', () => {
    const r = new Requirement('a.b', 'quote', 'rule');
    r.skip('needs x');
    expect(r.result()).toMatchObject({ verdict: 'SKIP', summary: 'needs x' });
    r.pass('one');
    expect(r.result().verdict).toBe('PASS');
    r.judge([{ verdict: 'WARN', what: 'w' }], '');
    expect(r.result().verdict).toBe('WARN');
    r.judge([{ verdict: 'FAIL', what: 'f', expected: 'e', actual: 'g' }], '');
    expect(r.result()).toMatchObject({ verdict: 'FAIL', summary: 'f; expected e; got g' });
  });

  const report: CertifyReport = {
    providerId: 'p',
    baseUrl: 'http://sandbox',
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:05.000Z',
    options: { createSwaps: true, webhook: null, timeLimitMs: 5000, minQuoteValidityMs: 60000 },
    requirements: [
      {
        id: 'quote.fixed',
        area: 'quote',
        title: 'fixed <quote>',
        verdict: 'PASS',
        summary: 'ok',
        checks: [{ verdict: 'PASS', what: 'ok' }],
      },
      {
        id: 'swap.payload',
        area: 'swaps',
        title: 'payload',
        verdict: 'FAIL',
        summary: 'nonce | differs',
        checks: [
          {
            verdict: 'FAIL',
            what: 'nonce',
            expected: 'aa',
            actual: '<script>bb</script>',
            exchange: {
              method: 'POST',
              target: '/swap/fixed',
              requestBody: { nonce: 'aa' },
              status: 200,
              responseHeaders: {},
              responseExcerpt: '{"swapId":"s"}',
              ms: 12,
            },
          },
        ],
      },
    ],
    counts: { PASS: 1, FAIL: 1, WARN: 0, SKIP: 0 },
  };

  it('console lines: one per requirement, evidence under failures, a summary', () => {
    const lines = consoleLines(report);
    expect(lines[0]).toMatch(/^PASS {2}quote\.fixed/);
    expect(lines).toContain('          request:  POST /swap/fixed {"nonce":"aa"}');
    expect(lines).toContain('          response: HTTP 200 in 12 ms {"swapId":"s"}');
    expect(lines.at(-1)).toBe('p: 2 requirements, 1 pass, 1 fail, 0 warn, 0 skip -> NOT CERTIFIED');
  });

  it('HTML is self-contained and escaped; Markdown escapes table pipes', () => {
    const html = htmlReport(report);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&#60;script&#62;bb');
    expect(html).toContain('fixed &#60;quote&#62;');
    expect(html).not.toMatch(/src=|href=/);
    expect(markdownReport(report)).toContain('nonce \\| differs');
    expect([
      reportFormatOf('a.HTML'),
      reportFormatOf('a.json'),
      reportFormatOf('a.md'),
      reportFormatOf('a.txt'),
    ]).toEqual(['html', 'json', 'md', undefined]);
  });
});

describe('partner certify arguments', () => {
  it('repeats --pair and --report, takes --webhook with or without an address', () => {
    const a = certifyArgs([
      '--provider',
      'p',
      '--pair',
      'btc/eth',
      '--pair',
      'eth/btc',
      '--report',
      'a.html',
      '--report',
      'a.json',
      '--webhook',
      '--create-swaps',
    ]);
    expect(a.options.pairs).toEqual([
      { from: 'btc', to: 'eth' },
      { from: 'eth', to: 'btc' },
    ]);
    expect(a.reports.map((r) => r.format)).toEqual(['html', 'json']);
    expect(a.options.webhook).toEqual({ host: '127.0.0.1', port: 0 });
    expect(a.options.createSwaps).toBe(true);
    expect(certifyArgs(['--provider', 'p', '--webhook', '0.0.0.0:8080']).options.webhook).toEqual({
      host: '0.0.0.0',
      port: 8080,
    });
    expect(certifyArgs(['--provider', 'p', '--webhook', '[::1]:9']).options.webhook).toEqual({
      host: '::1',
      port: 9,
    });
    expect(certifyArgs(['--provider', 'p', '--time-limit', '2.5']).options.timeLimitMs).toBe(2500);
  });

  it.each([
    [[]],
    [['--provider', 'p', '--pair', 'btc']],
    [['--provider', 'p', '--report', 'x.pdf']],
    [['--provider', 'p', '--webhook', 'host:99999']],
    [['--provider', 'p', '--time-limit', '0']],
    [['--provider', 'p', '--base-url', 'ftp://x']],
    [['--provider', 'p', '--bogus']],
    [['--provider', 'p', 'extra']],
  ])('refuses %j as a usage error', (args) => {
    expect(() => certifyArgs(args)).toThrow(UsageError);
  });
});
