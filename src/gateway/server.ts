import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildEdgeServer } from '../http/edge.ts';
import { MAX_FRACTION_DIGITS, MAX_INTEGER_DIGITS } from '../money/decimal.ts';
import type { Logger } from '../observability/log.ts';
import { PRINTABLE_PATTERN } from '../swap/text.ts';
import { SpanKind, withSpan } from '../observability/tracing.ts';
import { ApiKeyIndex } from '../providers/api-keys.ts';
import { IDEMPOTENCY_KEY } from './idempotency.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { SwapBody } from './rules.ts';
import type { Answer, GatewayService, QuoteBody } from './service.ts';

/**
 * The gateway HTTP API for the wallet backend:
 *   GET  /v1/providers/:providerId/currencies[?all=true]     synced catalog (enabled only unless all)
 *   GET  /v1/providers/:providerId/pairs[?from=&to=&all=true]
 *   POST /v1/quotes                                          catalog check, then the partner's quote
 *   POST /v1/swaps            (header Idempotency-Key)       fixed (quoteRef) or float (amount) swap
 * Every /v1 call needs `x-api-key`: a key of the wallet backend whose SHA-256 digest is in
 * GATEWAY_API_KEY_DIGESTS, compared in constant time. Every refusal is `{ error, messageKey? }`, one log
 * line without secrets and a metric. Metrics and health are on the process's metrics listener, never
 * here: /metrics, /healthz and /readyz answer 404 on this wallet-facing port, key or not (the edge kit,
 * src/http/edge.ts, which also maps framework errors to `{ error }`).
 */

export const WALLET_ID = 'wallet';

/** The wallet backend's keys, by digest. */
export function walletKeyIndex(digests: readonly string[]): ApiKeyIndex {
  return new ApiKeyIndex(
    digests.map((sha256, i) => ({ providerId: WALLET_ID, keyId: `wallet-${i + 1}`, sha256 })),
  );
}

export interface GatewayServerDeps {
  readonly service: Pick<GatewayService, 'currencies' | 'pairs' | 'quote' | 'createSwap'>;
  readonly keys: ApiKeyIndex;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly bodyLimitBytes?: number;
  /** HTTP_REQUEST_TIMEOUT_MS (default: src/observability/http-timeouts.ts). */
  readonly requestTimeoutMs?: number;
}

interface RequestState {
  keyId?: string;
  provider?: string;
  reason?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    gateway: RequestState | null;
  }
}

// Wallet text is handed to the partner and stored: printable and bounded (src/swap/text.ts); the service
// checks it again with partnerTextProblem (lone surrogates, which a JSON Schema pattern does not see).
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max, pattern: PRINTABLE_PATTERN });
const optionalText = (max: number) => ({ type: 'string', maxLength: max, pattern: PRINTABLE_PATTERN });
// The bounds of isDecimalText (40 integer, 36 fraction digits), non-negative.
const decimal = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_INTEGER_DIGITS + 1 + MAX_FRACTION_DIGITS,
  pattern: `^(?:0|[1-9]\\d{0,${MAX_INTEGER_DIGITS - 1}}|\\d{1,${MAX_INTEGER_DIGITS}})(?:\\.\\d{1,${MAX_FRACTION_DIGITS}})?$`,
};

const quoteSchema = {
  type: 'object',
  required: ['providerId', 'from', 'to', 'amount'],
  additionalProperties: false,
  properties: {
    providerId: text(64),
    from: text(100),
    to: text(100),
    amount: decimal,
    tradeMethod: { type: 'string', enum: ['fixed', 'float'] },
  },
} as const;

const swapSchema = {
  type: 'object',
  required: ['providerId', 'tradeMethod', 'payoutAddress', 'refundAddress', 'nonce'],
  additionalProperties: false,
  properties: {
    providerId: text(64),
    tradeMethod: { type: 'string', enum: ['fixed', 'float'] },
    quoteRef: text(100),
    from: text(100),
    to: text(100),
    amount: decimal,
    payoutAddress: text(256),
    payoutAddressExtraId: optionalText(256),
    refundAddress: text(256),
    refundAddressExtraId: optionalText(256),
    nonce: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    slippage: decimal,
  },
} as const;

const providerParams = {
  type: 'object',
  required: ['providerId'],
  properties: { providerId: text(64) },
} as const;

export function buildGatewayServer(deps: GatewayServerDeps): FastifyInstance {
  const app = buildEdgeServer({
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes ?? 65_536,
    ...(deps.requestTimeoutMs !== undefined ? { requestTimeoutMs: deps.requestTimeoutMs } : {}),
    noteReason: (request, reason) => {
      request.gateway = { ...request.gateway, reason };
    },
    refusals: {
      invalid: (detail) => ({ error: `invalid request: ${detail}`.slice(0, 300), reason: 'invalid_body' }),
      tooLarge: { error: 'body too large', reason: 'body_too_large' },
      client: (error) => ({ error: error.message.slice(0, 200) || 'bad request', reason: 'bad_request' }),
      internal: { error: 'internal error', reason: 'internal_error', log: 'gateway request failed' },
      notFound: { error: 'not found', reason: 'no_route' },
    },
  });
  app.decorateRequest('gateway', null);

  const send = (request: { gateway: RequestState | null }, reply: FastifyReply, answer: Answer) => {
    if (answer.reason) request.gateway = { ...request.gateway, reason: answer.reason };
    if (answer.headers) reply.headers(answer.headers);
    return reply.code(answer.status).send(answer.body);
  };

  /** One `gateway <METHOD> <route>` span per call: its partner calls and appends are its children. */
  const traced = (request: FastifyRequest, call: () => Promise<Answer>) =>
    withSpan(
      `gateway ${request.method} ${request.routeOptions.url ?? ''}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.route': request.routeOptions.url ?? '' },
      },
      async (span) => {
        const answer = await call();
        span.setAttribute('http.response.status_code', answer.status);
        return answer;
      },
    );

  // Authentication before the body is read: a caller without a key learns nothing else.
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers['x-api-key'];
    const match = deps.keys.authenticate(typeof header === 'string' && header !== '' ? header : undefined);
    if (!match) {
      request.gateway = {
        reason: header === undefined ? 'unauthorized: missing key' : 'unauthorized: unknown key',
      };
      return reply.code(401).send({ error: 'unauthorized' });
    }
    request.gateway = { keyId: match.keyId };
    return undefined;
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    const status = reply.statusCode;
    const state = request.gateway ?? {};
    deps.metrics.responses.inc({ route, status: String(status) });
    deps.metrics.duration.observe({ route }, reply.elapsedTime / 1000);
    if (status >= 400) {
      const reason = state.reason ?? 'unknown';
      deps.metrics.refusals.inc({
        route,
        reason: reason.startsWith('unauthorized') ? 'unauthorized' : reason,
      });
    }
    const line = {
      route,
      method: request.method,
      status,
      provider: state.provider,
      key: state.keyId,
      reason: state.reason,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (status < 400) request.log.info(line, 'gateway answered');
    else if (status >= 500) request.log.error(line, 'gateway refused');
    else request.log.info(line, 'gateway refused');
  });

  app.get<{ Params: { providerId: string }; Querystring: { all?: string } }>(
    '/v1/providers/:providerId/currencies',
    { schema: { params: providerParams } },
    async (request, reply) => {
      request.gateway = { ...request.gateway, provider: request.params.providerId.slice(0, 64) };
      return send(
        request,
        reply,
        await traced(request, () =>
          deps.service.currencies(request.params.providerId, request.query.all === 'true'),
        ),
      );
    },
  );

  app.get<{ Params: { providerId: string }; Querystring: { all?: string; from?: string; to?: string } }>(
    '/v1/providers/:providerId/pairs',
    { schema: { params: providerParams } },
    async (request, reply) => {
      request.gateway = { ...request.gateway, provider: request.params.providerId.slice(0, 64) };
      const q = request.query;
      return send(
        request,
        reply,
        await traced(request, () =>
          deps.service.pairs(request.params.providerId, {
            from: q.from,
            to: q.to,
            includeDisabled: q.all === 'true',
          }),
        ),
      );
    },
  );

  app.post<{ Body: QuoteBody }>('/v1/quotes', { schema: { body: quoteSchema } }, async (request, reply) => {
    request.gateway = { ...request.gateway, provider: request.body.providerId };
    return send(request, reply, await traced(request, () => deps.service.quote(request.body)));
  });

  app.post<{ Body: SwapBody }>('/v1/swaps', { schema: { body: swapSchema } }, async (request, reply) => {
    request.gateway = { ...request.gateway, provider: request.body.providerId };
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
      return send(request, reply, {
        status: 400,
        reason: 'idempotency_key_missing',
        body: { error: 'header Idempotency-Key is required (1-200 visible ASCII characters)' },
      });
    }
    return send(request, reply, await traced(request, () => deps.service.createSwap(request.body, key)));
  });

  return app;
}
