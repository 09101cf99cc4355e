import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { migratePlatform } from '../../src/db/migrate.ts';
import { startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testKafka, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import {
  endOffsets,
  postStatus,
  testProvider,
  writeProvidersFile,
  type WebhookCall,
} from './webhook-support.ts';

/**
 * Issue 13 at the webhook edge, on the real stack: input bounds refused with 400 and nothing stored, a path
 * id checked before any query (a NUL in it used to fail its neighbours' batched lookups with 500), and a
 * fuzz run of thousands of generated requests with a valid key: no 5xx, and the projector reaches the end.
 */
describe('webhook input bounds and fuzz (real HTTP, Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const P = testProvider('wh-bounds', { rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } });
  const open = uniqueName('bounds-open');
  const other = uniqueName('bounds-other');
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let webhook: RunningWebhook;
  const quiet = createLogger({ level: 'silent' });

  const config = () => ({
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers.split(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: log.topic,
    KAFKA_CLIENT_ID: 'webhook-bounds-test',
    PROJECTION_SCHEMA: projection.schema,
    DLQ_TOPIC: `${log.topic}.dlq`,
  });
  const post = (swapId: string, body: unknown): Promise<WebhookCall> =>
    postStatus(webhook.url, swapId, body, { 'x-api-key': P.key.key });
  const body = (extra: Record<string, unknown> = {}) => ({
    providerId: P.id,
    providerStatus: 'PENDING',
    amount: '0.25',
    ...extra,
  });

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    projection = await freshProjection('webhook_bounds');
    log = await freshEventLog(4);
    projector = await startProjector(config(), quiet);
    await log.append([swapCreated(open, { providerId: P.id }), swapCreated(other, { providerId: P.id })]);
    await waitForProjection(projection.pool, log.topic);
    webhook = await startWebhook(
      {
        ...config(),
        KAFKA_SEND_TIMEOUT_MS: 10_000,
        PROVIDERS_FILE: writeProvidersFile([P]),
        PROVIDER_REFRESH_MS: 60_000,
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: 0,
        WEBHOOK_BODY_LIMIT_BYTES: 4096,
      },
      quiet,
    );
  });

  afterAll(async () => {
    await webhook?.stop();
    await projector?.stop();
    await log?.close();
    await projection?.pool.end();
  });

  const HUGE = '1'.repeat(81);
  it.each([
    ['amount of 81 digits', { amount: HUGE }],
    ['amount of 41 integer digits', { amount: `${'9'.repeat(41)}.5` }],
    ['fee with 37 fraction digits', { providerFees: `0.${'1'.repeat(37)}` }],
    ['networkFees of 81 digits', { networkFees: HUGE }],
    ['NUL in payinTransactionId', { payinTransactionId: 'in\u0000' }],
    ['NUL in transactionHash', { transactionHash: '\u0000out' }],
    ['NUL in providerStatus', { providerStatus: 'PEND\u0000ING' }],
    ['a control character in transactionHash', { transactionHash: 'out\u001b[31m' }],
    ['a transactionHash of 257 characters', { transactionHash: 'h'.repeat(257) }],
    // Issue 41 point 11: JSON's "\ud800" escape parses to a lone surrogate, which the schema's pattern passes.
    ['a lone high surrogate in transactionHash', { transactionHash: 'out\ud800' }],
    ['a lone low surrogate in payinTransactionId', { payinTransactionId: '\udc00in' }],
    ['a lone surrogate in providerStatus', { providerStatus: 'PENDING\ud83d' }],
  ])('400 for %s; nothing stored', async (_what, extra) => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const res = await post(open, body(extra));
    expect(res.status, res.body).toBe(400);
    expect(Object.keys(res.json())).toEqual(['error']);
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before);
  });

  it('400 for a body that repeats a key, at any depth, naming it; nothing stored (issue 41 point 11)', async () => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    // JSON.parse keeps the last: the partner's FINISHED would be read as PENDING, or the other way round.
    const twice = `{"providerId":"${P.id}","providerStatus":"FINISHED","amount":"0.25","providerStatus":"PENDING"}`;
    const res = await post(open, twice);
    expect([res.status, res.json()]).toEqual([
      400,
      { error: 'duplicate key "providerStatus" in the JSON body' },
    ]);
    const deep = await post(
      open,
      `{"providerId":"${P.id}","providerStatus":"PENDING","amount":"0.25","x":{"k":1,"k":2}}`,
    );
    expect([deep.status, deep.json()]).toEqual([400, { error: 'duplicate key "k" in the JSON body at $.x' }]);
    // Authentication still comes first: without a key, the same 401 as any other body.
    const anonymous = await postStatus(webhook.url, open, twice);
    expect(anonymous.status).toBe(401);
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before);
  });

  it('names the lone surrogate in the 400; a surrogate pair (an emoji) is text', async () => {
    const res = await post(open, body({ transactionHash: 'out\ud800' }));
    expect(res.json()).toEqual({
      error: 'transactionHash contains the unprintable lone surrogate U+D800 at 3',
    });
    expect((await post(open, body({ transactionHash: 'memo \ud83d\ude80' }))).status).toBe(200);
  });

  it('400 for a NUL in the path swapId, before any query; 40 concurrent neighbours are answered as usual', async () => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const calls = await Promise.all([
      post('\u0000', body()),
      post(`x\u0000y`, body()),
      ...Array.from({ length: 40 }, (_, i) =>
        post(i % 2 ? open : other, body({ payinTransactionId: `n-${i}` })),
      ),
    ]);
    expect(calls[0]!.status).toBe(400);
    expect(calls[1]!.status).toBe(400);
    expect(calls.slice(2).map((c) => c.status)).toEqual(Array(40).fill(200));
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 40n);
  });

  it('fuzz: 3,000 generated requests with a valid key get no 5xx, and the projector reaches the end of the log', async () => {
    let seed = 0x5eed;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const junk = () =>
      String.fromCodePoint(
        ...Array.from({ length: Math.floor(rnd() * 12) }, () =>
          pick([0, 1, 0x1b, 0x7f, 0x85, 0x2028, 0xfffd, 0x1f600, 65 + Math.floor(rnd() * 26), 0x30]),
        ),
      );
    const amounts = [
      '0.25',
      '',
      '-1',
      '1e5',
      HUGE,
      '0x10',
      ' 1',
      '1.',
      '.5',
      '00012.5',
      '1'.repeat(40),
      `0.${'3'.repeat(36)}`,
    ];
    const values = () => pick<unknown>([junk(), pick(amounts), null, 12.5, true, {}, [], 'a'.repeat(300)]);
    const ids = [open, other, 'unknown-swap', '', '%00', junk(), 'a/b', '..', 'x'.repeat(300)];
    const statuses = ['PENDING', 'FINISHED', 'REFUNDED', 'EXPIRED', 'ON_HOLD', 'nope', '', junk()];
    const bodies = (): unknown => {
      const shape = rnd();
      if (shape < 0.05) return pick(['', 'null', '[]', '{"a":', '"text"', '{"providerId":']);
      const b: Record<string, unknown> = {
        providerId: rnd() < 0.9 ? P.id : junk(),
        providerStatus: pick(statuses),
        amount: rnd() < 0.7 ? pick(amounts) : values(),
      };
      for (const f of ['providerFees', 'networkFees', 'payinTransactionId', 'transactionHash'])
        if (rnd() < 0.5) b[f] = rnd() < 0.5 ? pick(amounts) : values();
      if (rnd() < 0.1) b[junk() || 'extra'] = values();
      return b;
    };
    const statusesSeen = new Map<number, number>();
    const total = 3000;
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next++;
        const id = rnd() < 0.7 ? pick([open, other]) : pick(ids);
        const res = await post(id, bodies());
        statusesSeen.set(res.status, (statusesSeen.get(res.status) ?? 0) + 1);
        expect(res.status, `${res.status} ${res.body}`).toBeLessThan(500);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    expect([...statusesSeen.values()].reduce((a, b) => a + b, 0)).toBe(total);
    expect(statusesSeen.get(200) ?? 0).toBeGreaterThan(0);
    expect(statusesSeen.get(400) ?? 0).toBeGreaterThan(0);
    await waitForProjection(projection.pool, log.topic);
    const admin = testKafka('fuzz').admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(log.topic);
      const cps = await projection.pool.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from projector_checkpoints where topic = $1',
        [log.topic],
      );
      for (const e of ends) {
        const cp = cps.rows.find((r) => r.partition === e.partition);
        expect(cp?.next_offset ?? '0', `partition ${e.partition}`).toBe(e.high);
      }
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
