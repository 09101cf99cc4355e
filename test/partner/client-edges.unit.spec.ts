import { describe, expect, it } from 'vitest';
import {
  PartnerClient,
  PartnerHttpError,
  PartnerRequestError,
  PartnerResponseError,
  SwapNotFoundError,
  type PartnerClientOptions,
} from '../../src/partner/index.ts';

/**
 * The client's edges of issue 13 with a scripted fetch (no network): request bounds refused before any
 * call, empty pages with fresh cursors stopped after a few pages, and a 404 on /status that is not the
 * interface's body retried as a transport error.
 */

type Script = (url: URL, init: RequestInit) => Response;

function client(script: Script, extra: Partial<PartnerClientOptions> = {}) {
  const calls: URL[] = [];
  const c = new PartnerClient({
    provider: 'p1',
    baseUrl: 'http://partner.test/api',
    payloadKeys: [],
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    sleep: async () => undefined,
    fetch: (async (input: URL, init: RequestInit) => {
      calls.push(input);
      return script(input, init);
    }) as typeof fetch,
    inspectPayload: async () => ({ signatureValid: true, findings: [] }),
    ...extra,
  });
  return { c, calls };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const swapRequest = {
  refundAddress: 'bc1qrefund',
  payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
  currencyFrom: 'btc',
  currencyTo: 'eth',
  payloadCurrencyFrom: 'BTC',
  payloadCurrencyTo: 'ETH',
  nonce: 'ab'.repeat(32),
  amount: '0.1',
};

describe('request bounds: refused before any call', () => {
  it.each([
    'refundAddress',
    'payoutAddress',
    'refundAddressExtraId',
    'payoutAddressExtraId',
    'currencyFrom',
    'currencyTo',
    'payloadCurrencyFrom',
  ])('a NUL in %s', async (field) => {
    const { c, calls } = client(() => json(500, {}));
    const e = await rejection(c.createFloatSwap({ ...swapRequest, [field]: 'x\u0000y' }));
    expect(e).toBeInstanceOf(PartnerRequestError);
    expect((e as PartnerRequestError).field).toBe(field);
    expect((e as PartnerRequestError).reason).toMatch(/U\+0000/);
    expect(calls).toHaveLength(0);
  });

  it('an 81-digit amount, a NUL quoteId, a NUL swapId', async () => {
    const { c, calls } = client(() => json(500, {}));
    expect(await rejection(c.createFloatSwap({ ...swapRequest, amount: '1'.repeat(81) }))).toBeInstanceOf(
      PartnerRequestError,
    );
    expect(await rejection(c.quote({ from: 'btc', to: 'eth', amount: '9'.repeat(41) }))).toBeInstanceOf(
      PartnerRequestError,
    );
    const { amount: _, ...fixed } = swapRequest;
    expect(await rejection(c.createFixedSwap({ ...fixed, quoteId: 'q\u0000' }))).toBeInstanceOf(
      PartnerRequestError,
    );
    expect(await rejection(c.status('s\u0000'))).toBeInstanceOf(PartnerRequestError);
    expect(calls).toHaveLength(0);
  });
});

describe('a partner answer outside the bounds is refused', () => {
  it('a NUL in the swapId of a swap creation', async () => {
    const { c } = client(() =>
      json(200, {
        swapId: 's\u0000',
        payinAddress: 'addr',
        createdAt: '2024-03-01T12:00:00Z',
        providerFees: '0.1',
        referralFees: '0.01',
        payoutNetworkFees: '0.001',
        providerSig: { payload: 'AAAA', signature: 'BBBB' },
      }),
    );
    const e = await rejection(c.createFloatSwap(swapRequest));
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).field).toBe('swapId');
  });

  it('a numeric fee leaves the swap created, that fee unknown, with a finding', async () => {
    const { c } = client(() =>
      json(200, {
        swapId: 's1',
        payinAddress: 'addr',
        createdAt: '2024-03-01T12:00:00Z',
        providerFees: 0.1,
        referralFees: null,
        payoutNetworkFees: '0.001',
        providerSig: { payload: 'AAAA', signature: 'BBBB' },
      }),
    );
    const created = await c.createFloatSwap(swapRequest);
    expect(created.swap).toMatchObject({
      swapId: 's1',
      providerFees: null,
      referralFees: null,
      payoutNetworkFees: '0.001',
    });
    expect(created.payload.findings.map((f) => `${f.check}:${f.outcome}`)).toEqual([
      'response.fee_format:unverifiable',
      'response.fee_format:unverifiable',
    ]);
  });
});

describe('lists', () => {
  it('empty pages with fresh cursors stop after 3 pages with a clear error', async () => {
    let n = 0;
    const { c, calls } = client(() => json(200, { pairs: [], next_cursor: `c${++n}` }));
    const pages: unknown[] = [];
    const e = await rejection(
      (async () => {
        for await (const page of c.pairPages()) pages.push(page);
      })(),
    );
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).message).toMatch(/3 consecutive empty pages/);
    expect(calls).toHaveLength(3);
    expect(pages).toHaveLength(2);
  });

  it('an empty page between full ones is fine (the count is of consecutive empty pages)', async () => {
    const answers = [
      { pairs: [], next_cursor: 'a' },
      { pairs: [], next_cursor: 'b' },
      {
        pairs: [{ from: 'btc', to: 'eth', tradeMethod: ['fixed'], minSwapAmount: '1', maxSwapAmount: '2' }],
        next_cursor: 'c',
      },
      { pairs: [], next_cursor: 'd' },
      { pairs: [], next_cursor: null },
    ];
    let i = 0;
    const { c } = client(() => json(200, answers[i++]));
    const all = [];
    for await (const pair of c.pairs()) all.push(pair);
    expect(all).toHaveLength(1);
    expect(i).toBe(5);
  });
});

describe('GET /status 404', () => {
  it("the interface's JSON body is 'swap not found', at once", async () => {
    const { c, calls } = client(() => json(404, { message: 'transaction s1 not found' }));
    expect(await rejection(c.status('s1'))).toBeInstanceOf(SwapNotFoundError);
    expect(calls).toHaveLength(1);
  });

  it("a proxy's HTML 404 is a transport error, retried, and the next answer counts", async () => {
    let n = 0;
    const { c, calls } = client(() =>
      ++n === 1
        ? new Response('<html><body>404 Not Found</body></html>', {
            status: 404,
            headers: { 'content-type': 'text/html' },
          })
        : json(200, {
            status: 'PENDING',
            providerFees: '0.1',
            referralFees: null,
            payoutNetworkFees: '0.001',
          }),
    );
    const s = await c.status('s1');
    expect(s.status).toBe('PENDING');
    expect(s.referralFees).toBeNull();
    expect(calls).toHaveLength(2);
  });

  it('an HTML 404 on every attempt ends as an HTTP error, never as "not found"', async () => {
    const { c, calls } = client(() => new Response('<html>nope</html>', { status: 404 }));
    const e = await rejection(c.status('s1'));
    expect(e).toBeInstanceOf(PartnerHttpError);
    expect(e).not.toBeInstanceOf(SwapNotFoundError);
    expect(calls).toHaveLength(3);
  });
});
