import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AmountLimitError,
  PartnerClient,
  PartnerHttpError,
  SwapNotFoundError,
  currencyNetwork,
  parsePartnerTimestamp,
  partnerErrorFromResponse,
  providerSignatureOf,
  validateCurrencyListResponse,
  validatePairListResponse,
  validateQuoteResponse,
  validateStatusResponse,
  validateSwapResponse,
  type SwapRequestFloat,
} from '../../src/partner/index.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';

// Hand-written from the interface's field tables and docs/architecture.md's public test vector, never produced by
// the simulator: they hold the client to the interface rather than to our own simulator.
const dir = new URL('../fixtures/partner/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, dir), 'utf8');
const json = (name: string): unknown => JSON.parse(text(name));

const VECTOR_KEY = {
  keyId: 'design-vector',
  curve: 'secp256k1' as const,
  publicKey:
    '0478d5facdae2305f48795d3ce7d9244f5060d2f800901da5746d1f4177ae8d7bbe63f3870efc0d36af8f91962811e1d8d9df91ce3b3ea2cd9f550c7d465f8b7b3',
  validFrom: '2020-01-01T00:00:00Z',
};

// The request the test vector's payload was signed for (its decoded fields).
const VECTOR_REQUEST: SwapRequestFloat = {
  amount: '0.0000115',
  refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf4teq',
  payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
  currencyFrom: 'btc',
  currencyTo: 'bat',
  payloadCurrencyFrom: 'BTC',
  payloadCurrencyTo: 'BAT',
  nonce: '350aea0c97f747f1d0f760814614a47523801b1aeb7d0bcbbaa2a4f46bf8184b',
};

describe('fixtures through the validators', () => {
  it('currency pages: chainId without blockchain, chainId winning, tokens with contracts', () => {
    const p1 = validateCurrencyListResponse(json('currencies-page-1.json'), {
      provider: 'fx',
      operation: 'currencies',
    });
    expect(p1.next_cursor).toBe('cGFnZS0y');
    expect(p1.currencies.map(currencyNetwork)).toEqual([
      { kind: 'named', blockchain: 'bitcoin' },
      { kind: 'evm', chainId: 137 },
      { kind: 'evm', chainId: 1 },
    ]);
    const p2 = validateCurrencyListResponse(json('currencies-page-2.json'), {
      provider: 'fx',
      operation: 'currencies',
    });
    expect(p2.next_cursor).toBeNull();
    expect(p2.currencies[0]!.contract).toBe('0x0D8775F648430679A709E98d2b0Cb6250d2887EF');
  });

  it('pairs', () => {
    const page = validatePairListResponse(json('pairs-page.json'), { provider: 'fx', operation: 'pairs' });
    expect(page.pairs.map((p) => p.tradeMethod)).toEqual([['fixed', 'float'], ['float']]);
  });

  it('a fixed quote with a +0000 expiry and the sample-only fields', () => {
    const q = validateQuoteResponse(
      json('quote-fixed.json'),
      { provider: 'fx', operation: 'quote' },
      {
        from: 'btc',
        to: 'eth',
        amount: '0.5',
      },
    );
    expect(q.quoteId).toBe('3f1c9a52-6d0e-4c2a-9b7e-0e5d2c8f1a44');
    expect(parsePartnerTimestamp(q.expiry!)?.toISOString()).toBe('2025-06-01T12:30:00.000Z');
    expect([q.minAmountFrom, q.maxAmountFrom]).toEqual(['0.001', '10']);
  });

  it('a float quote without quoteId or expiry', () => {
    const q = validateQuoteResponse(json('quote-float.json'), { provider: 'fx', operation: 'quote' });
    expect(q.tradeMethod).toBe('float');
    expect(q.quoteId).toBeUndefined();
  });

  it('swap responses with payload_signature and with signature', () => {
    const a = validateSwapResponse(json('swap-response-payload-signature.json'), {
      provider: 'fx',
      operation: 'swap-float',
    });
    expect(providerSignatureOf(a.providerSig).field).toBe('payload_signature');
    expect(parsePartnerTimestamp(a.createdAt)?.toISOString()).toBe('2024-03-01T12:00:00.000Z');
    const b = validateSwapResponse(json('swap-response-signature.json'), {
      provider: 'fx',
      operation: 'swap-float',
    });
    expect(providerSignatureOf(b.providerSig).field).toBe('signature');
  });

  it('statuses: PENDING with empty ids, FINISHED, a partner-specific string with fields absent', () => {
    const ctx = { provider: 'fx', operation: 'status' } as const;
    const pending = validateStatusResponse(json('status-pending-empty.json'), ctx);
    expect(pending).toMatchObject({ status: 'PENDING', amount: undefined, payinTransactionId: undefined });
    expect(pending.payoutTransactionId).toBeUndefined();
    const done = validateStatusResponse(json('status-finished.json'), ctx);
    expect(done.amount).toBe('8.12345678');
    expect(validateStatusResponse(json('status-partner-specific.json'), ctx).status).toBe('exchanging');
  });

  it('error bodies', () => {
    const base = { provider: 'fx', headers: new Headers() };
    const min = partnerErrorFromResponse({
      ...base,
      operation: 'quote',
      status: 400,
      bodyText: text('error-min-amount.json'),
    });
    expect((min as AmountLimitError).minRequiredAmount?.toFixed()).toBe('0.001');
    const nf = partnerErrorFromResponse({
      ...base,
      operation: 'status',
      status: 404,
      bodyText: text('error-status-not-found.json'),
      swapId: 's',
    });
    expect(nf).toBeInstanceOf(SwapNotFoundError);
    const se = partnerErrorFromResponse({
      ...base,
      operation: 'pairs',
      status: 503,
      bodyText: text('server-error.json'),
    });
    expect((se as PartnerHttpError).serverError).toEqual({
      code: 503,
      message: 'Service temporarily unavailable',
    });
  });
});

describe('fixtures served over HTTP to the client', () => {
  let sim: PartnerSimulator;
  let client: PartnerClient;
  const serve = (op: Parameters<PartnerSimulator['injectFault']>[0], file: string, status = 200) =>
    sim.injectFault(op, { kind: 'http-status', status, body: text(file) });

  beforeAll(async () => {
    sim = await startPartnerSimulator();
    client = new PartnerClient({
      provider: 'fx',
      baseUrl: sim.url,
      payloadKeys: [VECTOR_KEY],
      retry: { maxAttempts: 1 },
    });
  });
  afterAll(() => sim.close());

  it('follows the hand-written cursor to the last page', async () => {
    serve('currencies', 'currencies-page-1.json');
    serve('currencies', 'currencies-page-2.json');
    const ids: string[] = [];
    for await (const c of client.currencies()) ids.push(c.id);
    expect(ids).toEqual(['btc', 'usdt-polygon', 'eth', 'bat']);
    expect(sim.calls('currencies').at(-1)!.query).toEqual({ cursor: 'cGFnZS0y' });
  });

  it('reads the fixed quote and the pending status', async () => {
    serve('quote', 'quote-fixed.json');
    const q = await client.quote({ from: 'btc', to: 'eth', amount: '0.5' });
    expect(q.expiry).toBe('2025-06-01T12:30:00+0000');
    serve('status', 'status-pending-empty.json');
    const s = await client.status('any');
    expect(s.status).toBe('PENDING');
    expect(s.payinTransactionId).toBeUndefined();
  });

  it('verifies the public test vector named payload_signature through the client', async () => {
    serve('swap-float', 'swap-response-payload-signature.json');
    const created = await client.createFloatSwap(VECTOR_REQUEST);
    expect(created.payload.signatureValid).toBe(true);
    expect(created.payload.keyId).toBe('design-vector');
    expect(created.payload.decoded?.amount_to_provider).toBe(1150n);
    expect(
      created.payload.findings.filter((f) => f.outcome === 'mismatch' || f.outcome === 'violation'),
    ).toEqual([]);
  });

  it('serves the 404 and min-amount error bodies', async () => {
    serve('status', 'error-status-not-found.json', 404);
    expect(await client.status('gone').catch((e: unknown) => e)).toBeInstanceOf(SwapNotFoundError);
    serve('quote', 'error-min-amount.json', 400);
    expect(
      await client.quote({ from: 'btc', to: 'eth', amount: '0.5' }).catch((e: unknown) => e),
    ).toBeInstanceOf(AmountLimitError);
  });
});
