import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { buildWebhookServer } from '../../src/ingest/webhook/server.ts';
import { postgresSwapLookup, startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { createLogger } from '../../src/observability/log.ts';
import { recordCreatedSwap } from '../../src/gateway/created.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import { valueOf } from '../../src/observability/metrics.ts';
import {
  capturedLogger,
  endOffsets,
  metricValue,
  postStatus,
  getText,
  spawnWebhook,
  testProvider,
  writeProvidersFile,
  type WebhookCall,
} from './webhook-support.ts';

describe('status webhook (real HTTP, Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const A = testProvider('wh-a', {
    extra: '    statusMap: { finished: FINISHED, exchanging: PENDING, UNKNOWN: null }',
  });
  const B = testProvider('wh-b');
  const OFF = testProvider('wh-off', { enabled: false });
  const LIMITED = testProvider('wh-limited', { rateLimit: { perSecond: 1, burst: 2 } });
  const mine = [A.id, B.id, OFF.id, LIMITED.id];
  const swap = {
    open: uniqueName('open'),
    final: uniqueName('final'),
    ofB: uniqueName('of-b'),
    race: uniqueName('race'),
    limited: uniqueName('limited'),
  };
  const logs = capturedLogger('info');
  const quiet = createLogger({ level: 'warn', name: 'webhook-test' });
  let providersFile: string;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let webhook: RunningWebhook;

  const projectorConfig = () => ({
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers.split(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: log.topic,
    KAFKA_CLIENT_ID: 'webhook-test',
    PROJECTION_SCHEMA: projection.schema,
    DLQ_TOPIC: `${log.topic}.dlq`,
  });

  const post = (swapId: string, body: unknown, key?: string) =>
    postStatus(webhook.url, swapId, body, key === undefined ? {} : { 'x-api-key': key });
  const bodyOf = (providerId: string, providerStatus = 'PENDING', extra: Record<string, unknown> = {}) => ({
    providerId,
    providerStatus,
    amount: '0.25',
    ...extra,
  });

  /** What a refused webhook must not change: the topic's end offsets, and rows of this test's providers. */
  async function storedState() {
    await waitForProjection(projection.pool, log.topic);
    const rows = await projection.pool.query(
      `select (select count(*) from swaps)::int as swaps,
         (select count(*) from event_journal)::int as journal,
         (select string_agg(swap_id || ':' || status || ':' || final, ',' order by swap_id) from swaps) as states,
         (select count(*) from platform.created_swaps where provider_id = any($1))::int as created,
         (select count(*) from platform.provider_api_keys where provider_id = any($1))::int as keys`,
      [mine],
    );
    return { offsets: await endOffsets(stack.kafkaBrokers, log.topic), ...rows.rows[0] };
  }

  const refusals = (status: number) =>
    logs.lines.filter((l) => l.msg === 'webhook refused' && l.status === status).length;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    projection = await freshProjection('webhook');
    log = await freshEventLog(4);
    projector = await startProjector(projectorConfig(), quiet);
    await log.append([
      swapCreated(swap.open, { providerId: A.id }),
      swapCreated(swap.final, { providerId: A.id }),
      statusReported(swap.final, 'FINISHED', { amount: '1' }, { providerId: A.id }),
      swapCreated(swap.ofB, { providerId: B.id }),
      swapCreated(swap.race, { providerId: A.id }),
      swapCreated(swap.limited, { providerId: LIMITED.id }),
    ]);
    await waitForProjection(projection.pool, log.topic);
    webhook = await startWebhook(
      {
        ...projectorConfig(),
        KAFKA_SEND_TIMEOUT_MS: 10_000,
        PROVIDERS_FILE: (providersFile = writeProvidersFile([A, B, OFF, LIMITED])),
        PROVIDER_REFRESH_MS: 60_000,
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: 0,
        WEBHOOK_BODY_LIMIT_BYTES: 4096,
        METRICS_PORT: 0,
      },
      logs.logger,
    );
  });

  afterAll(async () => {
    await webhook?.stop();
    await projector?.stop();
    await log?.close();
    await projection?.pool.end();
  });

  it('401: one byte-identical answer for a missing, wrong, unknown, disabled or mismatched key; nothing stored', async () => {
    const before = await storedState();
    const counted = await valueOf(webhook.metrics.responses, { status: '401', authenticated: 'false' });
    const calls: WebhookCall[] = [
      await post(swap.open, bodyOf(A.id)), // no key
      await post(swap.open, bodyOf(A.id), `slk_${'A'.repeat(43)}`), // a wrong key
      await post(swap.open, bodyOf(A.id), A.key.sha256), // the digest is not the key
      await post(swap.open, bodyOf('no-such-provider'), A.key.key), // unknown provider
      await post(swap.open, bodyOf(OFF.id), OFF.key.key), // disabled provider, its own key
      await post(swap.open, bodyOf(B.id), A.key.key), // A's key, B's providerId
      await post(swap.ofB, bodyOf(A.id), B.key.key), // B's key claiming to be A
      await post(swap.open, '{"not json', `slk_${'B'.repeat(43)}`), // bad body and a wrong key: 401 first
    ];
    const strip = (h: Record<string, string>) => {
      const { date: _date, ...rest } = h;
      return rest;
    };
    for (const call of calls) {
      expect(call.status).toBe(401);
      expect(call.body).toBe('{"error":"unauthorized"}');
      expect(strip(call.headers)).toEqual(strip(calls[0]!.headers));
    }
    expect(await storedState()).toEqual(before);
    expect(
      (await valueOf(webhook.metrics.responses, { status: '401', authenticated: 'false' })) - counted,
    ).toBe(calls.length);
    expect(refusals(401)).toBeGreaterThanOrEqual(calls.length);
    const reasons = logs.lines.filter((l) => l.status === 401).map((l) => l.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'unauthorized: missing key',
        'unauthorized: unknown key',
        'unauthorized: provider unknown or disabled',
        'unauthorized: key of another provider',
      ]),
    );
    // No key, digest or partner credential reaches the log.
    for (const secret of [A.key.key, A.key.sha256, B.key.key, OFF.key.key, 'partner-secret'])
      expect(logs.raw()).not.toContain(secret);
  });

  it('400 for malformed bodies (and 413 over the size limit), after authentication; nothing stored', async () => {
    const counted400 = await valueOf(webhook.metrics.responses, { status: '400', authenticated: 'true' });
    const before = await storedState();
    const bad: unknown[] = [
      '{"providerId": ',
      '',
      '"just a string"',
      { providerId: A.id, amount: '1' },
      { providerId: A.id, providerStatus: 'PENDING' },
      bodyOf(A.id, 'PENDING', { amount: 0.25 }),
      bodyOf(A.id, 'PENDING', { amount: '2.5e-3' }),
      bodyOf(A.id, 'PENDING', { amount: '1,5' }),
      bodyOf(A.id, 'PENDING', { providerFees: '0.1 BTC' }),
      bodyOf(A.id, 'PENDING', { networkFees: 0.0001 }),
      bodyOf(A.id, 'PENDING', { transactionHash: ['0xabc'] }),
    ];
    for (const body of bad) {
      const res = await post(swap.open, body, A.key.key);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.json())).toEqual(['error']);
    }
    const big = await post(
      swap.open,
      bodyOf(A.id, 'PENDING', { transactionHash: 'f'.repeat(5000) }),
      A.key.key,
    );
    expect(big.status).toBe(413);
    expect(big.json()).toEqual({ error: 'body larger than 4096 bytes' });
    expect(await storedState()).toEqual(before);
    expect(
      (await valueOf(webhook.metrics.responses, { status: '400', authenticated: 'true' })) - counted400,
    ).toBe(bad.length);
  });

  it('404 with transactionId when no swap of that provider matches: unknown, or another provider’s; nothing stored', async () => {
    const elsewhere = uniqueName('gw-b');
    await recordCreatedSwap(projection.pool, {
      swapId: elsewhere,
      providerId: B.id,
      createdAt: new Date().toISOString(),
    });
    const before = await storedState();
    const unknown = uniqueName('nope');
    const r1 = await post(unknown, bodyOf(A.id), A.key.key);
    const r2 = await post(swap.ofB, bodyOf(A.id), A.key.key); // projected, but B's
    const r3 = await post(elsewhere, bodyOf(A.id), A.key.key); // recorded by the gateway, but for B
    for (const [res, id] of [
      [r1, unknown],
      [r2, swap.ofB],
      [r3, elsewhere],
    ] as const) {
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ error: 'no swap matches this swapId and providerId', transactionId: id });
    }
    expect(await storedState()).toEqual(before);
  });

  it('a swap the gateway just recorded is found at once, before the projector knows it', async () => {
    const fresh = uniqueName('gw-a');
    await recordCreatedSwap(projection.pool, {
      swapId: fresh,
      providerId: A.id,
      createdAt: new Date().toISOString(),
    });
    expect((await projection.pool.query('select 1 from swaps where swap_id = $1', [fresh])).rowCount).toBe(0);
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const res = await post(fresh, bodyOf(A.id, 'exchanging'), A.key.key);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ message: 'queued' });
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 1n);
  });

  it('422 when providerStatus is not in the provider’s mapping; nothing stored', async () => {
    const before = await storedState();
    for (const status of ['UNKNOWN', 'finished ', 'FINISHED_OK', 'exchanging'.toUpperCase()]) {
      const res = await post(swap.open, bodyOf(A.id, status), A.key.key);
      expect(res.status, status).toBe(422);
      expect(Object.keys(res.json())).toEqual(['error']);
    }
    expect(await storedState()).toEqual(before);
  });

  it('405 when the projection shows the swap final: a report that agrees stores nothing', async () => {
    const final = (
      await projection.pool.query('select status, amount_to from swaps where swap_id = $1', [swap.final])
    ).rows[0];
    const before = await storedState();
    const res = await post(swap.final, bodyOf(A.id, final.status, { amount: final.amount_to }), A.key.key);
    expect(res.status).toBe(405);
    expect(res.json()).toEqual({ error: 'the swap is already final' });
    expect(await storedState()).toEqual(before);
  });

  it('405 when the swap is final and the report contradicts it: the swap does not change, the contradiction is recorded', async () => {
    const swapBefore = (
      await projection.pool.query('select status, amount_to, version from swaps where swap_id = $1', [
        swap.final,
      ])
    ).rows[0];
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const res = await post(swap.final, bodyOf(A.id, 'REFUNDED', { amount: '9.5' }), A.key.key);
    expect(res.status).toBe(405);
    expect(res.json()).toEqual({ error: 'the swap is already final' });
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 1n);
    await waitForProjection(projection.pool, log.topic);
    expect(
      (
        await projection.pool.query('select status, amount_to, version from swaps where swap_id = $1', [
          swap.final,
        ])
      ).rows[0],
    ).toEqual(swapBefore);
    const exceptions = (
      await projection.pool.query(
        `select j.event_type, j.outcome, c.field, c.final_value, c.reported_value
         from event_journal j join status_conflicts c on c.event_id = j.event_id
         where j.swap_id = $1 order by c.field`,
        [swap.final],
      )
    ).rows;
    expect(exceptions).toEqual([
      expect.objectContaining({
        event_type: 'StatusContradicted',
        outcome: 'contradicted',
        field: 'amountTo',
        reported_value: '9.5',
      }),
      expect.objectContaining({
        event_type: 'StatusContradicted',
        outcome: 'contradicted',
        field: 'status',
        final_value: swapBefore.status,
        reported_value: 'REFUNDED',
      }),
    ]);
    const queued = await projection.pool.query(`select reason from reconciliation_queue where swap_id = $1`, [
      swap.final,
    ]);
    expect(queued.rows).toEqual([{ reason: 'contradicted' }]);
  });

  it('200 "queued" only once Kafka holds the event; fields land where they belong; the projection shows it', async () => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const res = await post(
      swap.open,
      bodyOf(A.id, 'finished', {
        amount: '0.123456789012345678',
        providerFees: '0.0015',
        networkFees: '0.0003',
        payinTransactionId: 'payin-hash-1',
        transactionHash: 'payout-hash-1',
      }),
      A.key.key,
    );
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ message: 'queued' });
    // Acknowledged before the answer: the event is already in the log when "queued" arrives.
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 1n);
    await waitForProjection(projection.pool, log.topic);
    const row = (
      await projection.pool.query(
        `select status, provider_status, final, amount_to, provider_fees, referral_fees, payout_network_fees,
           payin_transaction_id, payout_transaction_id, extra_fees, webhook_network_fees from swaps where swap_id = $1`,
        [swap.open],
      )
    ).rows[0];
    expect(row).toEqual({
      status: 'FINISHED',
      provider_status: 'finished',
      final: true,
      amount_to: '0.123456789012345678',
      provider_fees: '0.0015',
      // networkFees is the interface's "referral or extra fee": kept as sent, read by the reconciler against
      // the referral fee the partner committed to; neither revenue nor an extra fee here.
      referral_fees: null,
      extra_fees: null,
      webhook_network_fees: '0.0003',
      payout_network_fees: null, // still unknown: the webhook carries no payout network fee
      payin_transaction_id: 'payin-hash-1',
      payout_transaction_id: 'payout-hash-1',
    });
    const journal = (
      await projection.pool.query(
        `select outcome, source, provider_id, payload from event_journal where swap_id = $1 and event_type = 'StatusReported'`,
        [swap.open],
      )
    ).rows;
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatchObject({
      outcome: 'applied',
      source: 'webhook',
      provider_id: A.id,
      payload: {
        providerStatus: 'finished',
        status: 'FINISHED',
        final: true,
        payoutNetworkFees: null,
        referralFees: null,
        extraFees: null,
        networkFees: '0.0003',
        networkFeesReading: 'evidence',
        statusClass: 'final',
        payoutTransactionId: 'payout-hash-1',
      },
    });
    // Now final in the projection: the next webhook for it is refused.
    expect((await post(swap.open, bodyOf(A.id, 'REFUNDED'), A.key.key)).status).toBe(405);
  });

  it('a webhook that races a final event is accepted, then journaled as a contradiction by the projector', async () => {
    await projector.stop(); // the projection lags behind the log, as it may at any moment
    await log.append([statusReported(swap.race, 'FINISHED', { amount: '2' }, { providerId: A.id })]);
    const res = await post(swap.race, bodyOf(A.id, 'REFUNDED', { amount: '3' }), A.key.key);
    expect(res.status).toBe(200);
    projector = await startProjector(projectorConfig(), quiet);
    await waitForProjection(projection.pool, log.topic);
    const journal = (
      await projection.pool.query(
        `select source, outcome, reason from event_journal where swap_id = $1 and event_type = 'StatusReported' order by "offset"`,
        [swap.race],
      )
    ).rows;
    expect(journal).toEqual([
      { source: 'poll', outcome: 'applied', reason: null },
      { source: 'webhook', outcome: 'contradicted', reason: expect.stringMatching(/contradicts final swap/) },
    ]);
    const state = (
      await projection.pool.query('select status, amount_to from swaps where swap_id = $1', [swap.race])
    ).rows[0];
    expect(state).toEqual({ status: 'FINISHED', amount_to: '2' });
  });

  it('420 over the provider’s rate limit, with the rate-limit headers; refused calls store nothing', async () => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const results: WebhookCall[] = [];
    for (let i = 0; i < 4; i++) results.push(await post(swap.limited, bodyOf(LIMITED.id), LIMITED.key.key));
    const accepted = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 420);
    expect(accepted + refused.length).toBe(4);
    expect(accepted).toBeGreaterThanOrEqual(2); // the burst
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.json()).toEqual({ error: 'rate limit exceeded' });
      expect(r.headers['x-ratelimit-limit']).toBe('2');
      expect(r.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + BigInt(accepted));
    // Another provider's bucket is its own.
    expect((await post(uniqueName('none'), bodyOf(B.id), B.key.key)).status).toBe(404);
  });

  it('500 for anything unexpected, without internals in the body; nothing stored', async () => {
    const broken = createPool(stack.databaseUrl, { searchPath: 'no_such_schema', max: 1 });
    const app = buildWebhookServer({
      appender: webhook.appender,
      swaps: postgresSwapLookup(broken), // "relation swaps does not exist"
      registry: webhook.registry,
      logger: logs.logger,
      bodyLimitBytes: 4096,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address() as { port: number };
      const before = await storedState();
      const res = await postStatus(`http://127.0.0.1:${address.port}`, swap.open, bodyOf(A.id), {
        'x-api-key': A.key.key,
      });
      expect(res.status).toBe(500);
      expect(res.body).toBe('{"error":"internal error"}');
      expect(await storedState()).toEqual(before);
      expect(
        logs.lines.some((l) => l.msg === 'webhook failed' && JSON.stringify(l).includes('does not exist')),
      ).toBe(true);
    } finally {
      await app.close();
      await broken.end();
    }
  });

  it('200 concurrent webhooks to a `webhook serve` process share Kafka produce requests', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `${uniqueName('burst')}-${i}`);
    const warm = uniqueName('warm');
    await projection.pool.query(
      `insert into platform.created_swaps (swap_id, provider_id, created_at) select unnest($1::text[]), $2, now()`,
      [[...ids, warm], A.id],
    );
    // Its own process, as in production: the load generator here does not share its event loop.
    const server = await spawnWebhook({
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: log.topic,
      PROJECTION_SCHEMA: projection.schema,
      PROVIDERS_FILE: providersFile,
      KAFKA_CLIENT_ID: 'webhook-test-serve',
      LOG_LEVEL: 'debug',
    });
    try {
      const metrics = async () => {
        const text = (await getText(`${server.metricsUrl}/metrics`)).body;
        return {
          requests: metricValue(text, 'swap_ledger_event_append_batch_messages_count') ?? 0,
          messages: metricValue(text, 'swap_ledger_event_append_batch_messages_sum') ?? 0,
        };
      };
      // Warm: the producer has its metadata, and 200 keep-alive connections are open (as a partner's
      // connection pool would be), so what is measured is the burst, not connection set-up.
      expect((await postStatus(server.url, warm, bodyOf(A.id), { 'x-api-key': A.key.key })).status).toBe(200);
      await Promise.all(ids.map(() => getText(`${server.url}/healthz`)));
      const before = { offsets: await endOffsets(stack.kafkaBrokers, log.topic), ...(await metrics()) };
      // The warm-up's own line is in before the burst's are counted from here.
      await vi.waitFor(() => expect(server.output()).toMatch(/produce request acknowledged/), {
        timeout: 5000,
      });
      const logged = server.output().length;
      const results = await Promise.all(
        ids.map((id) => postStatus(server.url, id, bodyOf(A.id, 'exchanging'), { 'x-api-key': A.key.key })),
      );
      expect(results.map((r) => r.status)).toEqual(ids.map(() => 200));
      expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before.offsets + 200n);
      const after = await metrics();
      const requests = after.requests - before.requests;
      expect(after.messages - before.messages).toBe(200);
      // Far fewer produce requests than webhooks: concurrent appends were gathered into shared sends.
      expect(requests).toBeLessThan(50);
      // The log lines of the burst's produce requests: they reach this process through a pipe, possibly after
      // the last response, so they are awaited (a run read 197 when the last request's line was still in it).
      const sizes = () =>
        [
          ...server
            .output()
            .slice(logged)
            .matchAll(/"messages":(\d+)[^\n]*produce request acknowledged/g),
        ].map((m) => Number(m[1]));
      await vi.waitFor(() => expect(sizes()).toHaveLength(requests), { timeout: 5000, interval: 50 });
      expect(sizes().reduce((a, b) => a + b, 0)).toBe(200);
      console.log(`200 concurrent webhooks -> ${requests} produce requests, sizes ${sizes().join(' ')}`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('serves metrics on its own listener, by status and authentication, never provider ids; the partner port answers 404', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz'])
      expect((await fetch(`${webhook.url}${path}`)).status, path).toBe(404);
    const res = await fetch(`${webhook.ops!.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const value = (series: string) => metricValue(text, series);
    expect(value(`swap_ledger_webhook_responses_total{status="401",authenticated="false"}`)).toBe(
      await valueOf(webhook.metrics.responses, { status: '401', authenticated: 'false' }),
    );
    expect(
      value(`swap_ledger_webhook_responses_total{status="200",authenticated="true"}`),
    ).toBeGreaterThanOrEqual(3);
    for (const status of ['400', '404', '405', '422'])
      expect(
        value(`swap_ledger_webhook_responses_total{status="${status}",authenticated="true"}`),
      ).toBeGreaterThanOrEqual(1);
    // A body over the limit is refused before it is read, so before authentication.
    expect(
      value(`swap_ledger_webhook_responses_total{status="413",authenticated="false"}`),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(`swap_ledger_webhook_responses_total{status="420",authenticated="true"}`),
    ).toBeGreaterThanOrEqual(1);
    expect(value('swap_ledger_event_append_batch_messages_count')).toBeGreaterThan(0);
    expect(value('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    for (const p of [A, B, OFF, LIMITED]) expect(text).not.toContain(p.id);
    expect(text).not.toContain(A.key.sha256);
    const health = await fetch(`${webhook.ops!.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${webhook.ops!.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { name: string; ok: boolean }[] }).checks).toEqual([
      expect.objectContaining({ name: 'kafka', ok: true }),
      expect.objectContaining({ name: 'schema-registry', ok: true }),
      expect.objectContaining({ name: 'postgres', ok: true }),
    ]);
  });
});
