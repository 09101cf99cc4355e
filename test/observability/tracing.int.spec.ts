import { context, propagation, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { swapKey } from '../../src/events/keys.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/log.ts';
import { startTracing, type Tracing } from '../../src/observability/tracing.ts';
import { replay } from '../../src/ops/replay.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { testKafka, testStack } from '../support/context.ts';
import { freshEventLog } from '../support/event-log.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  swapRow,
  type Platform,
} from '../gateway/support.ts';

type Span = tracing.ReadableSpan;

/** The OTel SDK with an in-memory exporter, around the real gateway, Kafka, projector and Postgres. */
describe('tracing: one trace from the gateway call through Kafka into the projection and the verdict', () => {
  const exporter = new tracing.InMemorySpanExporter();
  let tracer: Tracing | undefined;
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  beforeAll(async () => {
    tracer = await startTracing({
      serviceName: 'swap-ledger-test',
      spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
    });
    log = await freshEventLog(2);
    p = await startPlatform({ label: 'trace', topic: log.topic });
    await p.poller.syncCatalogs(); // a quote needs the synced catalog
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
    await tracer?.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const spans = () => exporter.getFinishedSpans();
  const parentOf = (s: Span) => s.parentSpanContext?.spanId;

  /** A fixed swap through the gateway: a quote, then the swap on it (the quote must answer 200). */
  async function createFixedSwap() {
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    });
    expect(q.status).toBe(200);
    return api(
      p,
      'POST',
      '/v1/swaps',
      {
        providerId: p.providerId,
        ...ADDRESSES,
        nonce: nonce(),
        tradeMethod: 'fixed',
        quoteRef: q.body.quoteRef,
      },
      { 'idempotency-key': idempotencyKey() },
    );
  }

  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    expect(await startTracing({ serviceName: 'x', env: {} })).toBeUndefined();
  });

  it('joins gateway -> partner call and append -> projector for a created swap', async () => {
    const s = await createFixedSwap();
    expect(s.status).toBe(201);
    const swapId = s.body.swapId as string;
    await eventually('the swap in the projection', async () => (await swapRow(p.pool, swapId)) ?? undefined);

    const gateway = spans().find(
      (x) => x.name === 'gateway POST /v1/swaps' && x.attributes['http.response.status_code'] === 201,
    );
    expect(
      gateway,
      spans()
        .map((x) => x.name)
        .join(', '),
    ).toBeDefined();
    const traceId = gateway!.spanContext().traceId;
    const inTrace = () => spans().filter((x) => x.spanContext().traceId === traceId);
    // The projector records its span right after the batch commits: wait for the one that applied it.
    const project = await eventually('the projector span in the trace', async () =>
      inTrace().find(
        (x) =>
          x.name === 'project' &&
          x.attributes['swap_ledger.event_type'] === 'SwapCreated' &&
          x.attributes['swap_ledger.outcome'] === 'applied',
      ),
    );
    const gatewaySpan = gateway!.spanContext().spanId;
    const partner = inTrace().find((x) => x.name === 'partner swap-fixed')!;
    expect(partner).toBeDefined();
    expect(parentOf(partner)).toBe(gatewaySpan);
    // SwapCreated is durable in the outbox before it is sent: the request's own send (an `append`, child of
    // the call) or the outbox relay, if it got there first, publishes it. Either way the message carries this
    // call's trace, so the projector's span joins it: as the append's child, or straight under the call.
    const append = inTrace().find(
      (x) => x.name === 'append' && String(x.attributes['swap_ledger.event_types']).includes('SwapCreated'),
    );
    if (append) expect(parentOf(append)).toBe(gatewaySpan);
    expect([append?.spanContext().spanId, gatewaySpan]).toContain(parentOf(project));
    expect(project.attributes['messaging.destination.name']).toBe(log.topic);
    // No credential or key reaches a span.
    expect(JSON.stringify(inTrace().map((x) => x.attributes))).not.toContain(p.walletKey);
  });

  it('traces a status webhook into the projection too', async () => {
    const s = await createFixedSwap();
    const swapId = s.body.swapId as string;
    await eventually('the swap in the projection', async () => (await swapRow(p.pool, swapId)) ?? undefined);
    exporter.reset();
    p.sim.step(swapId);
    await p.sim.settled();
    const webhook = await eventually('a webhook span', async () =>
      spans().find((x) => x.name === 'webhook status' && x.attributes['http.response.status_code'] === 200),
    );
    const traceId = webhook.spanContext().traceId;
    const project = await eventually('its projector span', async () =>
      spans().find(
        (x) =>
          x.spanContext().traceId === traceId &&
          x.name === 'project' &&
          x.attributes['swap_ledger.event_type'] === 'StatusReported',
      ),
    );
    const append = spans().find((x) => x.spanContext().spanId === parentOf(project))!;
    expect(append.name).toBe('append');
    expect(parentOf(append)).toBe(webhook.spanContext().spanId);
  });

  it('carries the trace of the gateway call through the outbox: the relayed event joins it', async () => {
    // The platform's relay would publish the row within 250 ms: stopped, so the SwapCreated waits in the outbox.
    await p.gateway.relay.stop();
    exporter.reset();
    const appender = p.gateway.appender;
    const real = appender.appendAll.bind(appender);
    // The gateway "dies" between its commit and its Kafka send of SwapCreated: only the outbox has it.
    appender.appendAll = async (events, kept) => {
      if (events.some((e) => e.eventType === 'SwapCreated'))
        throw new Error('gateway killed before the send');
      return real(events, kept);
    };
    let swapId: string;
    try {
      const s = await createFixedSwap();
      expect(s.status).toBe(201);
      swapId = s.body.swapId as string;
    } finally {
      appender.appendAll = real;
    }
    const row = (
      await p.pool.query<{ trace_parent: string | null; trace_state: string | null; published: boolean }>(
        `select trace_parent, trace_state, published_at is not null as published from platform.outbox
         where aggregate_key = $1 and topic = $2 and event_type = 'SwapCreated'`,
        [swapKey(p.providerId, swapId), p.topic],
      )
    ).rows[0]!;
    expect(row.published).toBe(false);
    const gateway = spans().find(
      (x) =>
        x.name === 'gateway POST /v1/swaps' &&
        x.attributes['http.response.status_code'] === 201 &&
        row.trace_parent?.includes(x.spanContext().traceId),
    )!;
    expect(gateway, String(row.trace_parent)).toBeDefined();
    const traceId = gateway.spanContext().traceId;
    // The row keeps the context active when it was written: the gateway call's span.
    expect(row.trace_parent).toBe(`00-${traceId}-${gateway.spanContext().spanId}-01`);
    expect(row.trace_state).toBeNull();
    expect(await swapRow(p.pool, swapId)).toBeUndefined();

    // Relayed later, outside any request: the message carries the row's context, not the relay's.
    p.gateway.relay.start(100);
    const project = await eventually('the relayed event folded in the gateway call trace', async () =>
      spans().find(
        (x) =>
          x.spanContext().traceId === traceId &&
          x.name === 'project' &&
          x.attributes['swap_ledger.event_type'] === 'SwapCreated',
      ),
    );
    expect(parentOf(project)).toBe(gateway.spanContext().spanId);
    expect(project.attributes['swap_ledger.outcome']).toBe('applied');
    expect((await swapRow(p.pool, swapId))?.status).toBe('CREATED');
    // The relay's own append is a trace of its own (no request around it), and SwapCreated is not in it.
    const relayed = spans().find(
      (x) =>
        x.name === 'append' &&
        parentOf(x) === undefined &&
        String(x.attributes['swap_ledger.event_types']).includes('SwapCreated'),
    );
    expect(relayed).toBeDefined();
    expect(
      spans().filter(
        (x) => x.name === 'project' && x.spanContext().traceId === relayed!.spanContext().traceId,
      ),
    ).toEqual([]);
  });

  it('carries the trace of the request that made a swap final through the queue into the verdict', async () => {
    // A created swap: its creation trace (gateway -> append -> project) is the first test's.
    const s = await createFixedSwap();
    expect(s.status).toBe(201);
    const swapId = s.body.swapId as string;
    await eventually('the swap in the projection', async () => (await swapRow(p.pool, swapId)) ?? undefined);
    exporter.reset();
    // Finished by webhook: that request caused the event that queued the swap for reconciliation.
    p.sim.advance(swapId, 'FINISHED');
    await p.sim.settled();
    await eventually('the swap final in the projection', async () =>
      (await swapRow(p.pool, swapId))?.final ? true : undefined,
    );
    const webhook = spans().find(
      (x) => x.name === 'webhook status' && x.attributes['http.response.status_code'] === 200,
    )!;
    expect(webhook).toBeDefined();
    const traceId = webhook.spanContext().traceId;
    const queued = await p.pool.query<{ trace_parent: string | null }>(
      'select trace_parent from reconciliation_queue where provider_id = $1 and swap_id = $2',
      [p.providerId, swapId],
    );
    // The queue row keeps the W3C traceparent of the message that queued it: the webhook's append.
    const finalAppend = spans().find(
      (x) =>
        x.name === 'append' &&
        x.spanContext().traceId === traceId &&
        parentOf(x) === webhook.spanContext().spanId,
    )!;
    expect(queued.rows[0]?.trace_parent).toBe(
      `00-${traceId}-${finalAppend.spanContext().spanId}-${finalAppend.spanContext().traceFlags.toString(16).padStart(2, '0')}`,
    );

    // Replay keeps it too (the same headers, read again), so a promoted schema's queue still joins the trace.
    const rebuilt = await replay({
      databaseUrl: testStack().databaseUrl,
      kafka: testKafka('trace-replay'),
      codec: log.codec,
      topic: log.topic,
      liveSchema: p.schema,
      logger: createLogger({ level: 'fatal', name: 'trace-replay' }),
    });
    const replayed = await p.pool.query<{ trace_parent: string | null }>(
      `select trace_parent from ${rebuilt.schema}.reconciliation_queue where provider_id = $1 and swap_id = $2`,
      [p.providerId, swapId],
    );
    expect(replayed.rows[0]?.trace_parent).toBe(queued.rows[0]?.trace_parent);

    const reconciler = new Reconciler({
      projection: p.pool,
      platform: p.pool,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'fatal', name: 'trace-reconciler' }),
      confirmWaitMs: 0,
    });
    expect(await reconciler.drainQueue()).toBeGreaterThanOrEqual(1); // the earlier tests' swaps may be queued too
    const inTrace = () => spans().filter((x) => x.spanContext().traceId === traceId);
    const reconcile = inTrace().find((x) => x.name === 'reconcile')!;
    expect(
      reconcile,
      inTrace()
        .map((x) => x.name)
        .join(', '),
    ).toBeDefined();
    // A consumer's span for the message that queued the swap: the child of its append.
    expect(parentOf(reconcile)).toBe(finalAppend.spanContext().spanId);
    expect(reconcile.attributes['swap_ledger.verdict']).toMatch(
      /^(MATCHED|WITHIN_TOLERANCE|UNVERIFIABLE|MISMATCH)$/,
    );
    // The verdict goes on in the same trace: appended under the reconcile span, then folded.
    const verdictAppend = inTrace().find(
      (x) =>
        x.name === 'append' && String(x.attributes['swap_ledger.event_types']).includes('SwapReconciled'),
    )!;
    expect(parentOf(verdictAppend)).toBe(reconcile.spanContext().spanId);
    const verdictProject = await eventually('the verdict folded in the trace', async () =>
      inTrace().find(
        (x) => x.name === 'project' && x.attributes['swap_ledger.event_type'] === 'SwapReconciled',
      ),
    );
    expect(parentOf(verdictProject)).toBe(verdictAppend.spanContext().spanId);
    // The verdict emptied the queue row the trace came from.
    const left = await p.pool.query('select 1 from reconciliation_queue where swap_id = $1', [swapId]);
    expect(left.rowCount).toBe(0);
  });
});
