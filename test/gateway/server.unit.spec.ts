import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createGatewayMetrics } from '../../src/gateway/metrics.ts';
import { buildGatewayServer, walletKeyIndex } from '../../src/gateway/server.ts';
import type { Answer } from '../../src/gateway/service.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { valueOf } from '../../src/observability/metrics.ts';

/** The HTTP edge with a fake service: authentication, validation, the Idempotency-Key header, metrics, logs. */
function harness() {
  const key = generateApiKey();
  const calls: { op: string; args: unknown[] }[] = [];
  const ok =
    (op: string) =>
    async (...args: unknown[]): Promise<Answer> => {
      calls.push({ op, args });
      return { status: 200, body: { op } };
    };
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (l: string) => void (raw.push(l), lines.push(JSON.parse(l))) },
  );
  const metrics = createGatewayMetrics();
  const app = buildGatewayServer({
    service: {
      currencies: ok('currencies'),
      pairs: ok('pairs'),
      quote: ok('quote'),
      createSwap: ok('createSwap'),
    },
    keys: walletKeyIndex([key.sha256]),
    logger,
    metrics,
  });
  return { app, key: key.key, calls, lines, raw, metrics };
}

const quoteBody = { providerId: 'p', from: 'btc', to: 'eth', amount: '0.1' };
const swapBody = {
  providerId: 'p',
  tradeMethod: 'float',
  from: 'btc',
  to: 'eth',
  amount: '0.1',
  payoutAddress: '0xabc',
  refundAddress: 'bc1q',
  nonce: 'ab'.repeat(32),
};

describe('gateway HTTP edge', () => {
  it('refuses every /v1 call without a valid wallet key, identically, before any work', async () => {
    const h = harness();
    const answers = [
      await h.app.inject({ method: 'POST', url: '/v1/quotes', payload: quoteBody }),
      await h.app.inject({
        method: 'POST',
        url: '/v1/quotes',
        payload: quoteBody,
        headers: { 'x-api-key': 'slk_wrong' },
      }),
      await h.app.inject({
        method: 'GET',
        url: '/v1/providers/p/pairs',
        headers: { 'x-api-key': h.key + 'x' },
      }),
      await h.app.inject({
        method: 'POST',
        url: '/v1/swaps',
        payload: '{bad json',
        headers: { 'content-type': 'application/json' },
      }),
    ];
    for (const a of answers) {
      expect(a.statusCode).toBe(401);
      expect(a.json()).toEqual({ error: 'unauthorized' });
    }
    expect(h.calls).toEqual([]);
    expect(await valueOf(h.metrics.refusals, { route: '/v1/quotes', reason: 'unauthorized' })).toBe(2);
    expect(h.lines.filter((l) => l.msg === 'gateway refused' && l.status === 401)).toHaveLength(4);
    expect(h.raw.join('')).not.toContain(h.key); // never a key in a log line
  });

  it('passes an authenticated call to the service', async () => {
    const h = harness();
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/quotes',
      payload: quoteBody,
      headers: { 'x-api-key': h.key },
    });
    expect(r.statusCode).toBe(200);
    expect(h.calls.map((c) => c.op)).toEqual(['quote']);
    const pairs = await h.app.inject({
      method: 'GET',
      url: '/v1/providers/p/pairs?from=btc&all=true',
      headers: { 'x-api-key': h.key },
    });
    expect(pairs.statusCode).toBe(200);
    expect(h.calls[1]!.args).toEqual(['p', { from: 'btc', to: undefined, includeDisabled: true }]);
  });

  it('refuses an amount sent as a JSON number, an unknown field and a bad nonce (400, no service call)', async () => {
    const h = harness();
    const headers = { 'x-api-key': h.key, 'idempotency-key': 'k1' };
    for (const payload of [
      { ...quoteBody, amount: 0.1 },
      { ...quoteBody, extra: 1 },
      { ...quoteBody, amount: '1e3' },
    ]) {
      const r = await h.app.inject({ method: 'POST', url: '/v1/quotes', payload, headers });
      expect(r.statusCode).toBe(400);
      expect(r.json().error).toMatch(/invalid request/);
    }
    const nonce = await h.app.inject({
      method: 'POST',
      url: '/v1/swaps',
      payload: { ...swapBody, nonce: 'xyz' },
      headers,
    });
    expect(nonce.statusCode).toBe(400);
    expect(h.calls).toEqual([]);
    expect(await valueOf(h.metrics.refusals, { route: '/v1/quotes', reason: 'invalid_body' })).toBe(3);
  });

  it('refuses a body that repeats a key with 400 naming it, before the service (issue 41 point 11)', async () => {
    const h = harness();
    const headers = { 'x-api-key': h.key, 'idempotency-key': 'k1', 'content-type': 'application/json' };
    // JSON.parse would keep the second payoutAddress silently.
    const text = JSON.stringify(swapBody).replace('}', ',"payoutAddress":"0xattacker"}');
    const r = await h.app.inject({ method: 'POST', url: '/v1/swaps', payload: text, headers });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: 'duplicate key "payoutAddress" in the JSON body' });
    expect(h.calls).toEqual([]);
    expect(await valueOf(h.metrics.refusals, { route: '/v1/swaps', reason: 'bad_request' })).toBe(1);
  });

  it('needs an Idempotency-Key on POST /v1/swaps and hands it to the service', async () => {
    const h = harness();
    const missing = await h.app.inject({
      method: 'POST',
      url: '/v1/swaps',
      payload: swapBody,
      headers: { 'x-api-key': h.key },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatch(/Idempotency-Key/);
    expect(h.calls).toEqual([]);
    const r = await h.app.inject({
      method: 'POST',
      url: '/v1/swaps',
      payload: swapBody,
      headers: { 'x-api-key': h.key, 'idempotency-key': 'order-42' },
    });
    expect(r.statusCode).toBe(200);
    expect(h.calls[0]!.args[1]).toBe('order-42');
  });

  it('answers 404 on the metrics listener paths, key or not; counts into its registry', async () => {
    const h = harness();
    await h.app.inject({ method: 'POST', url: '/v1/quotes', payload: quoteBody });
    for (const url of ['/metrics', '/healthz', '/readyz', '/metrics?x=1']) {
      expect((await h.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
      const keyed = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': h.key } });
      expect(keyed.statusCode, url).toBe(404);
    }
    expect(await h.metrics.registry.expose()).toContain(
      'swap_ledger_gateway_responses_total{route="/v1/quotes",status="401"} 1',
    );
  });

  it('refuses to build a key index from a malformed digest', () => {
    expect(() => walletKeyIndex(['not-a-digest'])).toThrow(/digest/);
  });
});
