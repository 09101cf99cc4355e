import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/**
 * Tracing with OpenTelemetry, off by default: the SDK starts only when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set (it then exports OTLP as the standard OTEL_* variables say), or when a test hands it span
 * processors. Until then every span below is the API's no-op, at no cost. Trace context crosses Kafka in
 * message headers (W3C traceparent), so the projector's spans join the trace that appended the event;
 * the reconciliation queue keeps it (trace_parent), so the reconciler's span joins it too.
 */

const tracer = () => trace.getTracer('swap-ledger');

// Started from its own module, which loads no OpenTelemetry until tracing is on (every CLI command starts it).
export { startTracing, type Tracing } from './tracing-start.ts';

/** Runs `fn` in a new active span; an error marks the span and is thrown on. */
export function withSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
    },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (e) {
        span.recordException(e as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message?.slice(0, 200) });
        throw e;
      } finally {
        span.end();
      }
    },
  );
}

/** A finished span for work already done (e.g. a fold whose batch just committed). */
export function recordSpan(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent: Context; startTime: number },
): void {
  tracer()
    .startSpan(
      name,
      {
        kind: options.kind ?? SpanKind.CONSUMER,
        startTime: options.startTime,
        ...(options.attributes ? { attributes: options.attributes } : {}),
      },
      options.parent,
    )
    .end();
}

/** The active trace context as message headers (`traceparent`, `tracestate`); none when not tracing. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The trace context a message carries in its headers (kafkajs gives Buffers). */
export function contextFromHeaders(headers: Record<string, unknown> | undefined): Context | undefined {
  const raw = headers?.traceparent;
  if (raw === undefined) return undefined;
  const text = (v: unknown) =>
    Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'string' ? v : undefined;
  const carrier: Record<string, string> = { traceparent: text(raw) ?? '' };
  const state = text(headers?.tracestate);
  if (state) carrier.tracestate = state;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** A W3C traceparent: version 00, a trace id and a span id in lower-case hex, and the flags. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C traceparent a message carries (to keep beside what it caused, e.g. a queued reconciliation),
 * or null when it carries none or a malformed one: a header is input, and only the standard form is kept.
 */
export function traceParentOf(headers: Record<string, unknown> | undefined): string | null {
  const raw = headers?.traceparent;
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : typeof raw === 'string' ? raw : undefined;
  return text !== undefined && TRACEPARENT.test(text) ? text : null;
}

/** A trace context kept with something written now and sent later (an outbox row). */
export interface KeptTraceContext {
  readonly traceParent: string | null;
  readonly traceState: string | null;
}

/** The active trace context, to keep; nulls when not tracing (or a malformed traceparent). */
export function keepTraceContext(): KeptTraceContext {
  const headers = traceHeaders();
  const traceParent = traceParentOf(headers);
  return { traceParent, traceState: (traceParent && headers.tracestate) || null };
}

/**
 * The message headers for an event sent now that was written earlier under `kept`: the kept context, so
 * its consumers join the trace of the request that wrote it; but `current` (the append's) when there is
 * none, or when the append runs in that same trace (a request sending its own event: the append is the
 * nearer parent).
 */
export function headersForKept(
  kept: KeptTraceContext | undefined,
  current: Record<string, string>,
): Record<string, string> {
  if (!kept?.traceParent || !TRACEPARENT.test(kept.traceParent)) return current;
  const traceId = (traceParent: string | undefined) => traceParent?.split('-')[1];
  if (traceId(current.traceparent) === traceId(kept.traceParent)) return current;
  return kept.traceState
    ? { traceparent: kept.traceParent, tracestate: kept.traceState }
    : { traceparent: kept.traceParent };
}

/** The trace context a stored traceparent names; undefined when there is none. */
export function contextFromTraceParent(traceParent: string | null | undefined): Context | undefined {
  return traceParent ? contextFromHeaders({ traceparent: traceParent }) : undefined;
}

export { SpanKind };

/**
 * Wraps a fastify route handler in a SERVER span (`name`), so what it calls (appends, partner calls)
 * becomes part of the request's trace; the span records the HTTP status answered.
 */
export function tracedHandler<
  Req extends { method: string; routeOptions: { url?: string | undefined } },
  Rep extends { statusCode: number },
  R,
>(name: string, handler: (request: Req, reply: Rep) => Promise<R>): (request: Req, reply: Rep) => Promise<R> {
  return (request, reply) =>
    withSpan(
      name,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.route': request.routeOptions.url ?? '' },
      },
      async (span) => {
        const result = await handler(request, reply);
        span.setAttribute('http.response.status_code', reply.statusCode);
        return result;
      },
    );
}
