import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { AppendTimeoutError } from '../../src/events/producer.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { buildWebhookServer, createWebhookMetrics } from '../../src/ingest/webhook/server.ts';
import { RateLimiter } from '../../src/work/rate-limit.ts';
import { ApiKeyIndex, generateApiKey } from '../../src/providers/api-keys.ts';
import type { RegistrySnapshot } from '../../src/providers/cache.ts';
import type { KnownSwap } from '../../src/ingest/webhook/server.ts';
import { swapKey } from '../../src/events/keys.ts';
import { valueOf } from '../../src/observability/metrics.ts';

/** The route's logic with in-memory fakes (no network): order of checks, bodies, the event it appends. */
function harness(
  opts: {
    append?: (e: SwapEvent) => Promise<void>;
    find?: (swapId: string, providerId: string) => Promise<KnownSwap | undefined>;
    rateLimit?: { perSecond: number; burst: number };
  } = {},
) {
  const flushed: string[] = [];
  const keyA = generateApiKey();
  const keyOff = generateApiKey();
  const snapshot: RegistrySnapshot = {
    keys: new ApiKeyIndex([
      { providerId: 'a', keyId: 'ka', sha256: keyA.sha256 },
      { providerId: 'off', keyId: 'ko', sha256: keyOff.sha256 },
    ]),
    providers: new Map([
      [
        'a',
        {
          id: 'a',
          enabled: true,
          statusMapping: buildStatusMapping({ finished: 'FINISHED' }),
          rateLimit: opts.rateLimit ?? { perSecond: 1000, burst: 1000 },
          webhookNetworkFees: 'extra' as const,
          pollIntervalSeconds: 60,
        },
      ],
      [
        'off',
        {
          id: 'off',
          enabled: false,
          statusMapping: buildStatusMapping(),
          rateLimit: { perSecond: 1000, burst: 1000 },
          webhookNetworkFees: 'extra' as const,
          pollIntervalSeconds: 60,
        },
      ],
    ]),
    loadedAt: 0,
  };
  const appended: SwapEvent[] = [];
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const metrics = createWebhookMetrics();
  const app = buildWebhookServer({
    appender: {
      append: opts.append ?? (async (e) => void appended.push(e)),
    },
    swaps: { find: opts.find ?? (async () => ({ final: false, projected: true })) },
    registry: { snapshot: () => snapshot },
    logger,
    metrics,
    rateLimiter: new RateLimiter(),
    bodyLimitBytes: 2048,
    now: () => new Date('2026-11-01T12:00:00.000Z'),
    ensureKeyPublished: async (key) => void flushed.push(key),
  });
  const post = (
    body: unknown,
    headers: Record<string, string> = { 'x-api-key': keyA.key },
    swapId = 'swap-1',
  ) =>
    app.inject({
      method: 'POST',
      url: `/webhook/${swapId}/status`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { app, post, appended, lines, metrics, keyA, keyOff, flushed };
}

const ok = { providerId: 'a', providerStatus: 'finished', amount: '0.25' };
const finalSwap: KnownSwap = {
  projected: true,
  final: true,
  status: 'FINISHED',
  statusClass: 'final',
  amountTo: '0.25',
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
};

describe('status webhook route (in memory)', () => {
  it('queues a well-formed update and puts every field where it belongs', async () => {
    const h = harness();
    const res = await h.post({
      ...ok,
      providerFees: '0.001',
      networkFees: '0.0002',
      payinTransactionId: 'in-hash',
      transactionHash: 'out-hash',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'queued' });
    expect(h.appended).toHaveLength(1);
    const e = h.appended[0]!;
    expect(e).toMatchObject({
      eventType: 'StatusReported',
      swapId: 'swap-1',
      aggregateKey: swapKey('a', 'swap-1'),
      providerId: 'a',
      source: 'webhook',
      occurredAt: '2026-11-01T12:00:00.000Z',
      recordedAt: '2026-11-01T12:00:00.000Z',
      payload: {
        providerStatus: 'finished',
        status: 'FINISHED',
        final: true,
        statusClass: 'final',
        amount: '0.25',
        providerFees: '0.001',
        // networkFees is the interface's "referral or extra fee": an extra fee, never referral revenue.
        referralFees: null,
        extraFees: '0.0002',
        payoutNetworkFees: null,
        payinTransactionId: 'in-hash',
        payoutTransactionId: 'out-hash',
        refundTransactionId: null,
        quoteId: null,
      },
    });
    expect(e.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it('answers 401 before anything else, with the same bytes whatever the reason, and logs no secret', async () => {
    const h = harness();
    const cases = [
      h.post('{not json', {}), // no key, bad body
      h.post(ok, { 'x-api-key': 'slk_wrong' }),
      h.post({ ...ok, providerId: 'off' }, { 'x-api-key': h.keyOff.key }), // disabled provider
      h.post({ ...ok, providerId: 'nobody' }), // unknown provider, valid key of a
      h.post({ ...ok, providerId: 'off' }), // key of a, body names another provider
      h.post({ amount: 5 }, { 'x-api-key': 'x' }),
    ];
    const responses = await Promise.all(cases);
    for (const r of responses) {
      expect(r.statusCode).toBe(401);
      expect(r.body).toBe('{"error":"unauthorized"}');
      const { date: _d, ...headers } = r.headers;
      const { date: _d0, ...first } = responses[0]!.headers;
      expect(headers).toEqual(first);
    }
    expect(h.appended).toHaveLength(0);
    expect(await valueOf(h.metrics.responses, { status: '401', authenticated: 'false' })).toBe(cases.length);
    const logged = JSON.stringify(h.lines);
    expect(logged).not.toContain(h.keyA.key);
    expect(logged).not.toContain(h.keyOff.key);
    expect(logged).toContain('key of another provider');
  });

  it('answers 400 for malformed bodies once authenticated; never coerces a number into an amount', async () => {
    const h = harness();
    const bad: [unknown, RegExp][] = [
      ['{not json', /not valid JSON/],
      ['', /empty/],
      ['[1,2]', /JSON object/],
      [{ providerId: 'a', amount: '1' }, /providerStatus/],
      [{ providerId: 'a', providerStatus: 'PENDING' }, /amount/],
      [{ ...ok, amount: 0.25 }, /amount must be string/],
      [{ ...ok, amount: '1e5' }, /amount must be a decimal/],
      [{ ...ok, amount: '-1' }, /amount must not be negative/],
      [{ ...ok, providerFees: 'abc' }, /providerFees must be a decimal/],
      [{ ...ok, networkFees: 12 }, /networkFees must be string/],
      [{ ...ok, transactionHash: 7 }, /transactionHash/],
      [{ ...ok, providerStatus: '' }, /providerStatus/],
      [{ providerId: 7, providerStatus: 'PENDING', amount: '1' }, /providerId must be string/],
    ];
    for (const [body, message] of bad) {
      const res = await h.post(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toMatch(message);
      expect(Object.keys(res.json())).toEqual(['error']);
    }
    const noType = await h.app.inject({
      method: 'POST',
      url: '/webhook/s/status',
      headers: { 'x-api-key': h.keyA.key, 'content-type': 'text/plain' },
      payload: JSON.stringify(ok),
    });
    expect(noType.statusCode).toBe(400);
    expect(noType.json().error).toMatch(/content-type/);
    expect(h.appended).toHaveLength(0);
  });

  it('accepts empty and null optional values as "not known yet"', async () => {
    const h = harness();
    const res = await h.post({
      ...ok,
      providerStatus: 'PENDING',
      amount: '',
      providerFees: null,
      networkFees: '',
    });
    expect(res.statusCode).toBe(200);
    expect(h.appended[0]!.payload).toMatchObject({
      amount: '',
      providerFees: null,
      extraFees: '',
      statusClass: 'open',
      final: false,
    });
  });

  it('refuses a body over the limit with 413, unread', async () => {
    const h = harness();
    const res = await h.post({ ...ok, transactionHash: 'x'.repeat(4000) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'body larger than 2048 bytes' });
    expect(h.appended).toHaveLength(0);
  });

  it('checks 404, then 422, then 405', async () => {
    const missing = harness({ find: async () => undefined });
    const r404 = await missing.post({ ...ok, providerStatus: 'weird' }, undefined, 'sw-9');
    expect(r404.statusCode).toBe(404);
    expect(r404.json()).toEqual({
      error: 'no swap matches this swapId and providerId',
      transactionId: 'sw-9',
    });
    const final = harness({ find: async () => finalSwap });
    const r422 = await final.post({ ...ok, providerStatus: 'weird' });
    expect(r422.statusCode).toBe(422);
    expect(Object.keys(r422.json())).toEqual(['error']);
    const r405 = await final.post({ ...ok, amount: '0.250' });
    expect(r405.statusCode).toBe(405);
    expect(r405.json()).toEqual({ error: 'the swap is already final' });
    expect([...missing.appended, ...final.appended]).toHaveLength(0);
  });

  it('refuses a path swapId with a control character (a NUL above all) with 400, before any lookup', async () => {
    let lookups = 0;
    const h = harness({ find: async () => void lookups++ });
    for (const id of ['%00', 'ab%00cd', 'a%0Ab']) {
      const res = await h.post(ok, undefined, id);
      expect(res.statusCode, id).toBe(400);
      expect(Object.keys(res.json())).toEqual(['error']);
    }
    // An overlong id is refused by the router itself (414), never looked up.
    expect((await h.post(ok, undefined, 'x'.repeat(300))).statusCode).toBe(414);
    expect(lookups).toBe(0);
    expect(h.appended).toHaveLength(0);
  });

  it('looks the swap up by provider and swapId', async () => {
    const asked: [string, string][] = [];
    const h = harness({ find: async (swapId, providerId) => void asked.push([swapId, providerId]) });
    expect((await h.post(ok, undefined, 'sw-7')).statusCode).toBe(404);
    expect(asked).toEqual([['sw-7', 'a']]);
  });

  it('a report contradicting a final swap still gets 405, and is recorded as StatusContradicted', async () => {
    const h = harness({ find: async () => finalSwap });
    const res = await h.post({ ...ok, providerStatus: 'REFUNDED', amount: '0.25', transactionHash: 'back' });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toEqual({ error: 'the swap is already final' });
    expect(h.appended).toHaveLength(1);
    expect(h.appended[0]).toMatchObject({
      eventType: 'StatusContradicted',
      swapId: 'swap-1',
      aggregateKey: swapKey('a', 'swap-1'),
      providerId: 'a',
      source: 'webhook',
      payload: {
        knownStatus: 'FINISHED',
        report: {
          status: 'REFUNDED',
          statusClass: 'final',
          amount: '0.25',
          payoutTransactionId: null,
          refundTransactionId: 'back',
        },
      },
    });
    // A different final amount is a contradiction too; a value the swap does not know yet alone is not.
    expect((await h.post({ ...ok, amount: '0.3' })).statusCode).toBe(405);
    expect(h.appended.map((e) => e.eventType)).toEqual(['StatusContradicted', 'StatusContradicted']);
    expect((await h.post({ ...ok, providerFees: '0.001' })).statusCode).toBe(405);
    expect(h.appended).toHaveLength(2);
  });

  it('answers 503 when the contradiction is not acknowledged in time', async () => {
    const h = harness({
      find: async () => finalSwap,
      append: async (e) => {
        throw new AppendTimeoutError([e.eventId], 10);
      },
    });
    const res = await h.post({ ...ok, amount: '0.3' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
  });

  it('never says "queued" when Kafka does not acknowledge in time; 500 hides internals', async () => {
    const slow = harness({
      append: async (e) => {
        throw new AppendTimeoutError([e.eventId], 10);
      },
    });
    const r503 = await slow.post(ok);
    expect(r503.statusCode).toBe(503);
    expect(r503.body).not.toContain('queued');
    const broken = harness({
      find: async () => {
        throw new Error('relation "swaps" does not exist at 10.0.0.7 password=hunter2');
      },
    });
    const r500 = await broken.post(ok);
    expect(r500.statusCode).toBe(500);
    expect(r500.json()).toEqual({ error: 'internal error' });
    expect(await valueOf(broken.metrics.responses, { status: '500', authenticated: 'true' })).toBe(1);
  });

  it('rate-limits per provider with 420 and the interface headers, after authentication', async () => {
    const h = harness({ rateLimit: { perSecond: 1, burst: 3 } });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await h.post(ok));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0']);
    const refused = await h.post(ok);
    expect(refused.statusCode).toBe(420);
    expect(refused.json()).toEqual({ error: 'rate limit exceeded' });
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(h.appended).toHaveLength(3);
    expect(await valueOf(h.metrics.responses, { status: '420', authenticated: 'true' })).toBe(1);
    // Unauthenticated callers never reach (or drain) the bucket.
    const other = harness({ rateLimit: { perSecond: 1, burst: 1 } });
    for (let i = 0; i < 5; i++) expect((await other.post(ok, { 'x-api-key': 'nope' })).statusCode).toBe(401);
    expect((await other.post(ok)).statusCode).toBe(200);
  });
});

describe('status webhook: the outbox flush before a report', () => {
  it('flushes the swap key only for a swap the gateway alone knows (its SwapCreated may wait in the outbox)', async () => {
    const created = harness({ find: async () => ({ final: false, projected: false }) });
    expect((await created.post({ ...ok, providerStatus: 'PENDING' })).statusCode).toBe(200);
    expect(created.flushed).toEqual([swapKey('a', 'swap-1')]);

    const projected = harness({ find: async () => ({ final: false, projected: true }) });
    expect((await projected.post({ ...ok, providerStatus: 'PENDING' })).statusCode).toBe(200);
    expect(projected.flushed).toEqual([]); // its SwapCreated is folded already: no round trip
  });
});
