import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AmountLimitError,
  CurrencyNotFoundError,
  NoDepositWalletError,
  PairNotFoundError,
  PartnerApiError,
  PartnerClient,
  PartnerCursorLoopError,
  PartnerHttpError,
  PartnerNetworkError,
  PartnerRequestError,
  PartnerResponseError,
  QuoteNotFoundError,
  RateLimitedError,
  RegionRestrictedError,
  SwapNotFoundError,
  parsePartnerTimestamp,
  type PartnerClientOptions,
  type PartnerError,
  type PartnerOperation,
  type SwapRequestFixed,
  type SwapRequestFloat,
} from '../../src/partner/index.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';

// Every test talks real HTTP to a simulator on 127.0.0.1; retry delays are a few milliseconds.
let sim: PartnerSimulator;
let client: PartnerClient;
const retries: { operation: PartnerOperation; error: unknown }[] = [];

function makeClient(extra: Partial<PartnerClientOptions> = {}, url = sim.url): PartnerClient {
  return new PartnerClient({
    provider: 'sim',
    baseUrl: url,
    headers: { 'x-partner-key': 'secret' },
    payloadKeys: [sim.partnerKey()],
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 2000 },
    timeouts: { readMs: 2000, swapMs: 2000 },
    onRetry: (r) => retries.push(r),
    ...extra,
  });
}

async function caught(p: Promise<unknown>): Promise<PartnerError> {
  try {
    await p;
  } catch (e) {
    return e as PartnerError;
  }
  throw new Error('expected a rejection');
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const nonce = () => randomBytes(32).toString('hex');
const base = {
  refundAddress: 'bc1qrefundrefundrefundrefund',
  payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
  currencyFrom: 'btc',
  currencyTo: 'eth',
  payloadCurrencyFrom: 'BTC',
  payloadCurrencyTo: 'ETH',
};
const floatRequest = (over: Partial<SwapRequestFloat> = {}): SwapRequestFloat => ({
  ...base,
  amount: '0.25',
  nonce: nonce(),
  ...over,
});

async function fixedSwap(c = client) {
  const quote = await c.quote({ from: 'btc', to: 'eth', amount: '0.1' });
  const request: SwapRequestFixed = { ...base, quoteId: quote.quoteId!, nonce: nonce() };
  return { quote, request, created: await c.createFixedSwap(request, { quote }) };
}

beforeAll(async () => {
  sim = await startPartnerSimulator({ defaultPageSize: 3, requiredHeaders: { 'x-partner-key': 'secret' } });
  client = makeClient();
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.clearFaults();
  retries.length = 0;
});

describe('lists', () => {
  it('walks every page of /currencies, sending limit and cursor', async () => {
    const pages = await drain(client.currencyPages());
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 2]);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    const before = sim.calls('currencies').length;
    const limited = await drain(client.currencyPages({ limit: 5 }));
    const all = limited.flatMap((p) => p.items);
    expect(all.map((c) => c.id)).toEqual(['btc', 'ltc', 'eth', 'usdt', 'bat', 'pol', 'sol', 'xrp']);
    const calls = sim.calls('currencies').slice(before);
    expect(calls.map((c) => c.query)).toEqual([
      { limit: '5' },
      { limit: '5', cursor: limited[0]!.nextCursor },
    ]);
    expect(all.find((c) => c.id === 'usdt')).toMatchObject({ type: 'token', chainId: 1 });
    expect(all.find((c) => c.id === 'usdt')).not.toHaveProperty('decimals'); // simulator-only field not served
  });

  it('walks every page of /pairs', async () => {
    const pairs = await drain(client.pairs({ limit: 10 }));
    expect(pairs).toHaveLength(56);
    expect(new Set(pairs.map((p) => `${p.from}/${p.to}`)).size).toBe(56);
    expect(
      sim
        .calls('pairs')
        .slice(-6)
        .map((c) => c.query.limit),
    ).toEqual(Array(6).fill('10'));
  });

  it('stops on a repeated cursor instead of looping', async () => {
    sim.injectFault('pairs', { kind: 'repeat-cursor' }, { times: 2 });
    const e = await caught(drain(client.pairs({ limit: 10 })));
    expect(e).toBeInstanceOf(PartnerCursorLoopError);
    expect((e as PartnerCursorLoopError).field).toBe('next_cursor');
    expect((e as PartnerCursorLoopError).page).toBe(2);
  });

  it('refuses a page without next_cursor, naming the field', async () => {
    sim.injectFault('currencies', { kind: 'malformed-body', variant: 'drop-field' });
    const e = await caught(drain(client.currencies()));
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).field).toBe('next_cursor');
  });

  it('retries a failed page and continues from the same cursor', async () => {
    sim.injectFault('currencies', { kind: 'server-error', status: 502, body: 'text' });
    const all = await drain(client.currencies());
    expect(all).toHaveLength(8);
    expect(retries.map((r) => r.operation)).toEqual(['currencies']);
  });
});

describe('quotes', () => {
  it('returns a fixed quote with quoteId and a +0000 expiry, always sending amount', async () => {
    const q = await client.quote({ from: 'btc', to: 'eth', amount: '0.1' });
    expect(q.tradeMethod).toBe('fixed');
    expect(q.quoteId).toMatch(/^q-/);
    expect(q.expiry).toMatch(/\+0000$/);
    expect(parsePartnerTimestamp(q.expiry!)!.getTime()).toBeGreaterThan(Date.now());
    expect(q.minAmountFrom).toBe('0.0002'); // kept though not in the schema
    expect(sim.calls('quote').at(-1)!.body).toEqual({ from: 'btc', to: 'eth', amount: '0.1' });
  });

  it('returns a float quote when asked', async () => {
    const q = await client.quote({ from: 'btc', to: 'xrp', amount: '0.1' });
    expect(q.tradeMethod).toBe('float');
    expect(q.quoteId).toBeUndefined();
  });

  it('maps the partner limits to AmountLimitError with decimal bounds', async () => {
    const low = await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.00001' }));
    expect(low).toBeInstanceOf(AmountLimitError);
    expect((low as AmountLimitError).limit).toBe('minimum');
    expect((low as AmountLimitError).minRequiredAmount?.toFixed()).toBe('0.0002');
    expect((low as AmountLimitError).maxRequiredAmount?.toFixed()).toBe('5');
    const high = await caught(client.quote({ from: 'btc', to: 'eth', amount: '6' }));
    expect((high as AmountLimitError).limit).toBe('maximum');
    expect(high.httpStatus).toBe(400);
  });

  it('maps an unknown pair to PairNotFoundError (404)', async () => {
    const e = await caught(client.quote({ from: 'btc', to: 'doge', amount: '0.1' }));
    expect(e).toBeInstanceOf(PairNotFoundError);
    expect(e.httpStatus).toBe(404);
  });

  it('refuses a quoted figure with more decimals than its currency has (ETH: 18), never rounding it', async () => {
    const ethDecimals = makeClient({ currencyDecimals: (id) => ({ eth: 18, btc: 8 })[id] });
    sim.injectFault('quote', {
      kind: 'malformed-body',
      variant: 'set-field',
      field: 'payoutNetworkFees',
      value: '0.0020000000000000001',
    });
    const e = await caught(ethDecimals.quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).field).toBe('payoutNetworkFees');
    expect(e.message).toContain("19 decimal places, more than eth's 18");
    // 18 places pass, and so does any figure of a currency whose decimals are not known.
    sim.injectFault('quote', {
      kind: 'malformed-body',
      variant: 'set-field',
      field: 'payoutNetworkFees',
      value: '0.002000000000000001',
    });
    expect((await ethDecimals.quote({ from: 'btc', to: 'eth', amount: '0.1' })).payoutNetworkFees).toBe(
      '0.002000000000000001',
    );
    sim.injectFault('quote', {
      kind: 'malformed-body',
      variant: 'set-field',
      field: 'providerFees',
      value: '0.0020000000000000001',
    });
    expect(await client.quote({ from: 'btc', to: 'eth', amount: '0.1' })).toBeTruthy();
  });

  it('refuses an invalid amount before calling', async () => {
    const before = sim.calls('quote').length;
    for (const amount of ['', '1e3', '-1', '0', ' 1']) {
      expect(await caught(client.quote({ from: 'btc', to: 'eth', amount }))).toBeInstanceOf(
        PartnerRequestError,
      );
    }
    expect(
      await caught(client.quote({ from: 'btc', to: 'eth', amount: 1 as unknown as string })),
    ).toBeInstanceOf(PartnerRequestError);
    expect(sim.calls('quote').length).toBe(before);
  });
});

describe('swaps', () => {
  it('creates a fixed swap, verified against the simulator key', async () => {
    const { created, request } = await fixedSwap();
    expect(created.swap.swapId).toBeTruthy();
    expect(created.payload.signatureValid).toBe(true);
    expect(created.payload.keyId).toBe(sim.partnerKey().keyId);
    expect(created.payload.findings.filter((f) => f.outcome !== 'ok')).toEqual([]);
    expect(created.payload.decoded?.currency_from).toBe('BTC');
    expect(Buffer.from(created.payload.decoded!.device_transaction_id_ng).toString('hex')).toBe(
      request.nonce,
    );
  });

  it('creates a new swap id on every call, even for one quote', async () => {
    const quote = await client.quote({ from: 'btc', to: 'eth', amount: '0.1' });
    const a = await client.createFixedSwap({ ...base, quoteId: quote.quoteId!, nonce: nonce() }, { quote });
    const b = await client.createFixedSwap({ ...base, quoteId: quote.quoteId!, nonce: nonce() }, { quote });
    expect(a.swap.swapId).not.toBe(b.swap.swapId);
    expect(sim.swap(a.swap.swapId)!.quoteId).toBe(quote.quoteId);
  });

  it('creates a float swap whose payload signs the requested amount', async () => {
    const created = await client.createFloatSwap(floatRequest({ amount: '0.25' }));
    expect(created.payload.signatureValid).toBe(true);
    expect(created.payload.decoded?.amount_to_provider).toBe(25_000_000n);
    expect(created.payload.findings.filter((f) => f.outcome !== 'ok')).toEqual([]);
  });

  it('reports payload problems as findings, never as errors', async () => {
    sim.injectSwapFaults(['invalid-signature', 'wrong-nonce']);
    const created = await client.createFloatSwap(floatRequest());
    expect(created.payload.signatureValid).toBe(false);
    const problems = created.payload.findings.filter((f) => f.outcome !== 'ok').map((f) => f.check);
    expect(problems).toContain('signature.verify');
    expect(problems).toContain('payload.device_transaction_id_ng');
  });

  it('maps the swap errors: quote, currencies, deposit wallet, region', async () => {
    expect(
      await caught(client.createFixedSwap({ ...base, quoteId: 'q-missing', nonce: nonce() })),
    ).toBeInstanceOf(QuoteNotFoundError);
    const from = await caught(client.createFloatSwap(floatRequest({ currencyFrom: 'nope' })));
    expect(from).toBeInstanceOf(CurrencyNotFoundError);
    expect((from as CurrencyNotFoundError).side).toBe('from');
    const to = await caught(client.createFloatSwap(floatRequest({ currencyTo: 'nope' })));
    expect((to as CurrencyNotFoundError).side).toBe('to');
    const restricted = await startPartnerSimulator({
      restrictedCurrencies: ['eth'],
      noDepositWallet: ['ltc'],
    });
    try {
      const c = makeClient({ payloadKeys: [restricted.partnerKey()] }, restricted.url);
      const region = await caught(c.createFloatSwap(floatRequest()));
      expect(region).toBeInstanceOf(RegionRestrictedError);
      expect((region as RegionRestrictedError).restriction).toBe('currency');
      expect(region.httpStatus).toBe(451);
      const wallet = await caught(
        c.createFloatSwap(floatRequest({ currencyFrom: 'ltc', currencyTo: 'btc', amount: '1' })),
      );
      expect(wallet).toBeInstanceOf(NoDepositWalletError);
    } finally {
      await restricted.close();
    }
  });

  it('never retries a swap: not on 5xx, 420 or a dropped connection', async () => {
    for (const fault of [
      { kind: 'server-error', status: 503 },
      { kind: 'rate-limited', retryAfter: '0' },
    ] as const) {
      const before = sim.calls('swap-float').length;
      sim.injectFault('swap-float', fault, { times: 3 });
      const e = await caught(client.createFloatSwap(floatRequest()));
      expect(e.httpStatus).toBe(fault.kind === 'server-error' ? 503 : 420);
      expect(sim.calls('swap-float').length).toBe(before + 1);
      sim.clearFaults();
    }
    const swapsBefore = sim.swaps().length;
    sim.injectFault('swap-float', { kind: 'drop-connection' });
    const dropped = await caught(client.createFloatSwap(floatRequest()));
    expect(dropped).toBeInstanceOf(PartnerNetworkError);
    expect((dropped as PartnerNetworkError).outcomeUnknown).toBe(true);
    expect(sim.swaps().length).toBe(swapsBefore + 1); // the partner did create it
    expect(retries).toEqual([]);
  });

  it('keeps the body of a malformed swap answer: the swap exists and its id is in there', async () => {
    sim.injectFault('swap-float', { kind: 'malformed-body', variant: 'drop-field', field: 'providerSig' });
    const e = await caught(client.createFloatSwap(floatRequest()));
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).field).toBe('providerSig');
    const received = (e as PartnerResponseError).received as { swapId: string };
    expect(sim.swap(received.swapId)).toBeDefined();
  });

  it('accepts the payload_signature naming', async () => {
    const other = await startPartnerSimulator({ signatureField: 'payload_signature', curve: 'secp256r1' });
    try {
      const created = await makeClient({ payloadKeys: [other.partnerKey()] }, other.url).createFloatSwap(
        floatRequest(),
      );
      expect(created.swap.providerSig.signature).toBeUndefined();
      expect(created.swap.providerSig.payload_signature).toBeTruthy();
      expect(created.payload.signatureValid).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('refuses a request that would break the payload before creating anything', async () => {
    const before = sim.calls('swap-float').length;
    for (const bad of [
      { nonce: 'abc' },
      { nonce: `0x${'a'.repeat(62)}` },
      { payoutAddress: '' },
      { slippage: '2' },
      { amount: '0' },
    ]) {
      expect(await caught(client.createFloatSwap(floatRequest(bad)))).toBeInstanceOf(PartnerRequestError);
    }
    expect(sim.calls('swap-float').length).toBe(before);
  });
});

describe('status', () => {
  it('reads a pending swap with empty transaction ids, then its final status', async () => {
    const { created, quote } = await fixedSwap();
    const pending = await client.status(created.swap.swapId);
    expect(pending.status).toBe('PENDING');
    expect(pending.amount).toBeUndefined();
    expect(pending.payinTransactionId).toBeUndefined();
    expect(pending.quoteId).toBe(quote.quoteId);
    sim.advance(created.swap.swapId, 'FINISHED');
    const done = await client.status(created.swap.swapId);
    expect(done.status).toBe('FINISHED');
    expect(done.amount).toBe(quote.amountTo);
    expect(done.payinTransactionId).toBeTruthy();
    expect(done.payoutTransactionId).toMatch(/^0x/);
    expect(sim.calls('status').at(-1)!.query).toEqual({ swapId: created.swap.swapId });
  });

  it('passes partner-specific status strings through', async () => {
    const { created } = await fixedSwap();
    sim.advance(created.swap.swapId, { status: 'sending_to_wallet', like: 'PROCESSING' });
    expect((await client.status(created.swap.swapId)).status).toBe('sending_to_wallet');
  });

  it('maps 404 to SwapNotFoundError, for a {message} body and an ErrorPayload', async () => {
    const a = await caught(client.status('no-such-swap'));
    expect(a).toBeInstanceOf(SwapNotFoundError);
    expect((a as SwapNotFoundError).swapId).toBe('no-such-swap');
    expect((a as SwapNotFoundError).partnerMessage).toContain('not found');
    sim.injectFault('status', { kind: 'error-key', messageKey: 'TRANSACTION_NOT_FOUND', status: 404 });
    const b = await caught(client.status('other'));
    expect(b).toBeInstanceOf(SwapNotFoundError);
    expect((b as SwapNotFoundError).messageKey).toBe('TRANSACTION_NOT_FOUND');
    expect(retries).toEqual([]);
  });
});

describe('every documented error key over HTTP', () => {
  const cases = [
    ['quote', 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR', AmountLimitError, 400],
    ['quote', 'FROM_CURRENCY_MAXIMUM_AMOUNT_ERROR', AmountLimitError, 400],
    ['quote', 'SWAP_PAIR_NOT_FOUND_ERROR', PairNotFoundError, 404],
    ['quote', 'REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
    ['quote', 'CURRENCY_REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
    ['swap-fixed', 'NO_DEPOSIT_WALLET_ERROR', NoDepositWalletError, 400],
    ['swap-fixed', 'CURRENCY_FROM_NOT_FOUND_ERROR', CurrencyNotFoundError, 404],
    ['swap-fixed', 'CURRENCY_TO_NOT_FOUND_ERROR', CurrencyNotFoundError, 404],
    ['swap-fixed', 'SWAP_QUOTE_NOT_FOUND_ERROR', QuoteNotFoundError, 404],
    ['swap-fixed', 'REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
    ['swap-fixed', 'CURRENCY_REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
    ['swap-float', 'NO_DEPOSIT_WALLET_ERROR', NoDepositWalletError, 400],
    ['swap-float', 'REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
    ['swap-float', 'CURRENCY_REGION_RESTRICTED_ERROR', RegionRestrictedError, 451],
  ] as const;

  it.each(cases)('%s %s', async (operation, messageKey, cls, status) => {
    sim.injectFault(operation, { kind: 'error-key', messageKey, message: 'as the partner says' });
    const call =
      operation === 'quote'
        ? client.quote({ from: 'btc', to: 'eth', amount: '0.1' })
        : operation === 'swap-fixed'
          ? client.createFixedSwap({ ...base, quoteId: 'q-any', nonce: nonce() })
          : client.createFloatSwap(floatRequest());
    const e = await caught(call);
    expect(e).toBeInstanceOf(cls);
    expect(e.operation).toBe(operation);
    expect(e.httpStatus).toBe(status);
    expect((e as PartnerApiError).messageKey).toBe(messageKey);
    expect((e as PartnerApiError).partnerMessage).toBe('as the partner says');
    if (e instanceof AmountLimitError) expect(e.minRequiredAmount?.toFixed()).toBe('0.001');
    expect(retries).toEqual([]); // 4xx and 451 are final
  });

  it('keeps an undocumented key as a generic partner error', async () => {
    sim.injectFault('quote', {
      kind: 'error-key',
      messageKey: 'KYC_REQUIRED_ERROR',
      status: 403,
      additionalFields: { url: 'https://kyc' },
    });
    const e = await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(e.constructor).toBe(PartnerApiError);
    expect((e as PartnerApiError).kind).toBe('undocumented');
    expect((e as PartnerApiError).messageKey).toBe('KYC_REQUIRED_ERROR');
    expect((e as PartnerApiError).additionalFields).toEqual({ url: 'https://kyc' });
    expect(e.httpStatus).toBe(403);
  });
});

describe('rate limits, 5xx and network failures', () => {
  it('retries a 420 after its Retry-After and succeeds', async () => {
    const { created } = await fixedSwap();
    const before = sim.calls('status').length;
    sim.injectFault(
      'status',
      { kind: 'rate-limited', retryAfter: '0', limit: 60, remaining: 0 },
      { times: 2 },
    );
    expect((await client.status(created.swap.swapId)).status).toBe('PENDING');
    expect(sim.calls('status').length).toBe(before + 3);
    expect(retries).toHaveLength(2);
    const first = retries[0]!.error as RateLimitedError;
    expect(first).toBeInstanceOf(RateLimitedError);
    expect([first.retryAfterMs, first.limit, first.remaining]).toEqual([0, 60, 0]);
  });

  it('asks to wait the Retry-After (plus jitter below the base delay) before retrying', async () => {
    const slept: number[] = [];
    const c = makeClient({
      sleep: async (ms) => void slept.push(ms),
      retry: { baseDelayMs: 50, maxRetryAfterMs: 5000 },
    });
    sim.injectFault('quote', { kind: 'rate-limited', retryAfter: '2' });
    await c.quote({ from: 'btc', to: 'eth', amount: '0.1' });
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThanOrEqual(2000);
    expect(slept[0]).toBeLessThan(2050);
  });

  it('hands a 420 over at once when Retry-After is beyond the cap', async () => {
    sim.injectFault('quote', { kind: 'rate-limited', retryAfter: '3600', reset: 1_900_000_000 });
    const e = (await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }))) as RateLimitedError;
    expect(e).toBeInstanceOf(RateLimitedError);
    expect(e.retryAfterMs).toBe(3_600_000);
    expect(e.reset).toBe(1_900_000_000);
    expect(retries).toEqual([]);
  });

  it('retries 5xx and gives the last error when attempts are spent', async () => {
    sim.injectFault('pairs', { kind: 'server-error', status: 503 }, { times: 2 });
    expect((await drain(client.pairPages({ limit: 100 })))[0]!.items).toHaveLength(56);
    sim.injectFault('quote', { kind: 'server-error', status: 500 }, { times: 10 });
    const before = sim.calls('quote').length;
    const e = await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(e).toBeInstanceOf(PartnerHttpError);
    expect((e as PartnerHttpError).serverError).toEqual({ code: 500, message: 'simulated server error' });
    expect(sim.calls('quote').length).toBe(before + 4);
  });

  it('retries a dropped connection and a timeout on reads', async () => {
    const { created } = await fixedSwap();
    sim.injectFault('status', { kind: 'drop-connection' });
    expect((await client.status(created.swap.swapId)).status).toBe('PENDING');
    const fast = makeClient({ timeouts: { readMs: 100 } });
    sim.injectFault('status', { kind: 'slow', delayMs: 400 });
    expect((await fast.status(created.swap.swapId)).status).toBe('PENDING');
    const kinds = retries.map((r) => [
      (r.error as PartnerNetworkError).constructor.name,
      (r.error as PartnerNetworkError).timedOut,
    ]);
    expect(kinds).toEqual([
      ['PartnerNetworkError', false],
      ['PartnerNetworkError', true],
    ]);
  });

  it('says a swap cannot exist when the connection was refused', async () => {
    const gone = await startPartnerSimulator();
    const url = gone.url;
    await gone.close();
    const e = await caught(makeClient({}, url).createFloatSwap(floatRequest()));
    expect(e).toBeInstanceOf(PartnerNetworkError);
    expect((e as PartnerNetworkError).outcomeUnknown).toBe(false);
  });

  it('gives up when the caller aborts, with the caller reason', async () => {
    sim.injectFault('quote', { kind: 'slow', delayMs: 1000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('shutting down')), 50);
    const e = await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }, { signal: ac.signal }));
    expect((e as Error).message).toBe('shutting down');
    expect(retries).toEqual([]);
  });
});

describe('other answers', () => {
  it('sends the configured auth headers; without them the 401 is an HTTP error', async () => {
    expect(sim.calls().at(-1)!.headers['x-partner-key']).toBe('secret');
    const e = await caught(makeClient({ headers: {} }).quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(e).toBeInstanceOf(PartnerHttpError);
    expect((e as PartnerHttpError).status).toBe(401);
    expect((e as PartnerHttpError).serverError?.code).toBe(401);
    // a refused call does not use up an injected fault
    sim.injectFault('quote', { kind: 'error-key', messageKey: 'SWAP_PAIR_NOT_FOUND_ERROR' });
    await caught(makeClient({ headers: {} }).quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }))).toBeInstanceOf(
      PairNotFoundError,
    );
  });

  it('keeps status and a truncated body of any other status', async () => {
    sim.injectFault('quote', {
      kind: 'http-status',
      status: 418,
      body: 'teapot '.repeat(200),
      contentType: 'text/plain',
    });
    const e = (await caught(
      makeClient({ maxErrorBodyChars: 50 }).quote({ from: 'btc', to: 'eth', amount: '0.1' }),
    )) as PartnerHttpError;
    expect(e).toBeInstanceOf(PartnerHttpError);
    expect(e.status).toBe(418);
    expect(e.body).toHaveLength(51);
  });

  it.each([
    ['not-json', undefined, ''],
    ['truncated-json', undefined, ''],
    ['empty-body', undefined, ''],
    ['drop-field', 'amountTo', 'amountTo'],
    ['number-for-decimal', 'amountTo', 'amountTo'],
    ['set-field', 'expiry', 'expiry'],
  ] as const)('refuses a malformed quote body (%s) naming %s', async (variant, field, named) => {
    sim.injectFault('quote', { kind: 'malformed-body', variant, ...(field ? { field } : {}) });
    const e = await caught(client.quote({ from: 'btc', to: 'eth', amount: '0.1' }));
    expect(e).toBeInstanceOf(PartnerResponseError);
    expect((e as PartnerResponseError).field).toBe(named);
    expect(retries).toEqual([]);
  });

  it('refuses a malformed status body naming the field', async () => {
    const { created } = await fixedSwap();
    sim.injectFault('status', { kind: 'malformed-body', variant: 'number-for-decimal' });
    const e = await caught(client.status(created.swap.swapId));
    expect((e as PartnerResponseError).field).toBe('providerFees');
    expect(e.message).toMatch(/number/);
    sim.injectFault('status', { kind: 'malformed-body', variant: 'drop-field' });
    expect(((await caught(client.status(created.swap.swapId))) as PartnerResponseError).field).toBe('status');
  });
});
