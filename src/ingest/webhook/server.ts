import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import { createWebhookMetrics, type WebhookDeps } from './deps.ts';
import { RateLimiter } from './rate-limit.ts';
import { registerStatusRoute, STATUS_ROUTE, UnparsedBody } from './routes.ts';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * The webhook HTTP server (not yet listening): the status route only (metrics and health are on the
 * process's own metrics listener, never on this partner-facing port), a JSON WebhookError for every refusal, and one log line per refusal without secrets.
 */
export function buildWebhookServer(
  input: Omit<WebhookDeps, 'rateLimiter' | 'now' | 'metrics'> &
    Partial<Pick<WebhookDeps, 'rateLimiter' | 'now' | 'metrics'>>,
): FastifyInstance {
  const deps: WebhookDeps = {
    ...input,
    rateLimiter: input.rateLimiter ?? new RateLimiter(),
    now: input.now ?? (() => new Date()),
    metrics: input.metrics ?? createWebhookMetrics(),
  };
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per refusal comes from the onResponse hook below, not fastify's per-request lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimitBytes,
    // No coercion: a number where the interface has a decimal string is a 400, never a JS number.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    return503OnClosing: true,
  });
  app.decorateRequest('webhook', null);

  // Every body is read as text (up to the limit) and parsed here, so that authentication runs before any
  // parse error is answered: an unauthenticated caller learns nothing from the shape of its body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, raw, done) => {
    const text = raw as string;
    if (!JSON_TYPE.test(request.headers['content-type'] ?? ''))
      return done(null, new UnparsedBody('content-type must be application/json'));
    if (text.length === 0) return done(null, new UnparsedBody('body is empty'));
    parseJson(request, text, (err, value) =>
      done(null, err ? new UnparsedBody('body is not valid JSON') : value),
    );
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const message = `invalid body: ${error.message.replace(/^body\/?/, '')}`.slice(0, 300);
      request.webhook = { ...request.webhook, reason: message };
      return reply.code(400).send({ error: message });
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      request.webhook = { ...request.webhook, reason: 'body too large' };
      return reply.code(413).send({ error: `body larger than ${deps.bodyLimitBytes} bytes` });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.webhook = { ...request.webhook, reason: error.code ?? 'bad request' };
      return reply.code(status).send({ error: 'bad request' });
    }
    request.log.error({ err: { message: error.message, stack: error.stack } }, 'webhook failed');
    request.webhook = { ...request.webhook, reason: 'internal error' };
    return reply.code(500).send({ error: 'internal error' });
  });
  app.setNotFoundHandler((request, reply) => {
    request.webhook = { reason: 'no such route' };
    return reply.code(404).send({ error: 'not found' });
  });

  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const state = request.webhook ?? {};
    const provider = state.provider ?? 'none';
    deps.metrics.responses.inc({
      status: String(status),
      authenticated: String(state.provider !== undefined),
    });
    deps.metrics.duration.observe({ status: String(status) }, reply.elapsedTime / 1000);
    const line = {
      status,
      provider,
      ...(state.claimedProvider !== undefined ? { claimedProvider: state.claimedProvider } : {}),
      swapId: (request.params as { swapId?: string } | undefined)?.swapId?.slice(0, 200),
      reason: state.reason,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (status === 200) request.log.debug(line, 'webhook accepted');
    else if (status >= 500) request.log.error(line, 'webhook refused');
    else request.log.info(line, 'webhook refused');
  });

  registerStatusRoute(app, deps);
  return app;
}

export { STATUS_ROUTE };
export {
  createWebhookMetrics,
  type KnownSwap,
  type SwapLookup,
  type WebhookDeps,
  type WebhookMetrics,
} from './deps.ts';
