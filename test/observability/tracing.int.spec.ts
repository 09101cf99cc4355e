import { context, propagation, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/observability/tracing.ts';
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
describe('tracing: one trace from the gateway call through Kafka into the projection', () => {
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

  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    expect(await startTracing({ serviceName: 'x', env: {} })).toBeUndefined();
  });

  it('joins gateway -> partner call and append -> projector for a created swap', async () => {
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    });
    expect(q.status).toBe(200);
    const s = await api(
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
    // The projector records its span right after the batch commits: wait for it.
    const project = await eventually('the projector span in the trace', async () =>
      inTrace().find((x) => x.name === 'project' && x.attributes['swap_ledger.event_type'] === 'SwapCreated'),
    );
    const partner = inTrace().find((x) => x.name === 'partner swap-fixed')!;
    expect(partner).toBeDefined();
    expect(parentOf(partner)).toBe(gateway!.spanContext().spanId);
    const append = inTrace().find(
      (x) => x.name === 'append' && String(x.attributes['swap_ledger.event_types']).includes('SwapCreated'),
    )!;
    expect(append).toBeDefined();
    expect(parentOf(append)).toBe(gateway!.spanContext().spanId);
    // Across Kafka: the projector's span is the append's child, in the same trace.
    expect(parentOf(project)).toBe(append.spanContext().spanId);
    expect(project.attributes['swap_ledger.outcome']).toBe('applied');
    expect(project.attributes['messaging.destination.name']).toBe(log.topic);
    // No credential or key reaches a span.
    expect(JSON.stringify(inTrace().map((x) => x.attributes))).not.toContain(p.walletKey);
  });

  it('traces a status webhook into the projection too', async () => {
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    });
    const s = await api(
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
});
