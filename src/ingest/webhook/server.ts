import type { FastifyInstance } from 'fastify';
import { buildEdgeServer, DuplicateJsonKeyError, strictJsonParser } from '../../http/edge.ts';
import { createWebhookMetrics, type WebhookDeps } from './deps.ts';
import { AuthFailureThrottle, RefusalLogSampler, type FailureLimits } from './outsiders.ts';
import { RateLimiter } from '../../work/rate-limit.ts';
import { registerStatusRoute, STATUS_ROUTE, UnparsedBody } from './routes.ts';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The window of the refusal log's sampling: each source's first lines of a minute, then a summary. */
export const REFUSAL_LOG_WINDOW_MS = 60_000;

/** WEBHOOK_AUTH_FAILURE_BURST, WEBHOOK_AUTH_FAILURE_PER_MINUTE and WEBHOOK_REFUSAL_LOG_LINES unless configured. */
export const DEFAULT_OUTSIDER_LIMITS: FailureLimits & { readonly linesPerWindow: number } = {
  burst: 20,
  perSecond: 1,
  linesPerWindow: 10,
};

/**
 * The webhook HTTP server (not yet listening), on the edge kit (src/http/edge.ts): the status route only
 * (metrics and health are on the process's own metrics listener, never on this partner-facing port), a JSON
 * WebhookError for every refusal, and one log line per refusal without secrets.
 */
export function buildWebhookServer(
  input: Omit<WebhookDeps, 'rateLimiter' | 'now' | 'metrics' | 'authFailures' | 'refusalLog'> &
    Partial<Pick<WebhookDeps, 'rateLimiter' | 'now' | 'metrics'>> & {
      /** Unauthenticated callers: failures throttled and log lines sampled per source address. */
      readonly outsiders?: FailureLimits & { readonly linesPerWindow: number };
    },
): FastifyInstance {
  const outsiders = input.outsiders ?? DEFAULT_OUTSIDER_LIMITS;
  const deps: WebhookDeps = {
    ...input,
    rateLimiter: input.rateLimiter ?? new RateLimiter(),
    authFailures: new AuthFailureThrottle(outsiders),
    refusalLog: new RefusalLogSampler(outsiders.linesPerWindow, REFUSAL_LOG_WINDOW_MS),
    now: input.now ?? (() => new Date()),
    metrics: input.metrics ?? createWebhookMetrics(),
  };
  const app = buildEdgeServer({
    logger: deps.logger,
    bodyLimitBytes: deps.bodyLimitBytes,
    ...(deps.requestTimeoutMs !== undefined ? { requestTimeoutMs: deps.requestTimeoutMs } : {}),
    noteReason: (request, reason) => {
      request.webhook = { ...request.webhook, reason };
    },
    refusals: {
      invalid: (detail) => {
        const message = `invalid body: ${detail.replace(/^body\/?/, '')}`.slice(0, 300);
        return { error: message, reason: message };
      },
      tooLarge: { error: `body larger than ${deps.bodyLimitBytes} bytes`, reason: 'body too large' },
      client: (error) => ({ error: 'bad request', reason: error.code ?? 'bad request' }),
      internal: { error: 'internal error', reason: 'internal error', log: 'webhook failed' },
      notFound: { error: 'not found', reason: 'no such route' },
    },
  });
  app.decorateRequest('webhook', null);

  // Every body is read as text (up to the limit) and parsed here, so that authentication runs before any
  // parse error is answered: an unauthenticated caller learns nothing from the shape of its body.
  const parseJson = strictJsonParser(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, raw, done) => {
    const text = raw as string;
    if (!JSON_TYPE.test(request.headers['content-type'] ?? ''))
      return done(null, new UnparsedBody('content-type must be application/json'));
    if (text.length === 0) return done(null, new UnparsedBody('body is empty'));
    parseJson(request, text, (err, value) => {
      if (err instanceof DuplicateJsonKeyError) return done(null, new UnparsedBody(err.message));
      return done(null, err ? new UnparsedBody('body is not valid JSON') : value);
    });
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
    if (state.provider === undefined && status !== 200) {
      deps.metrics.unauthenticated.inc({ status: String(status) });
      // An outsider's refusals are logged a few a minute per source; the rest summed up by the timer below.
      if (!deps.refusalLog.admit(request.ip)) {
        deps.metrics.linesSuppressed.inc();
        return;
      }
    }
    // An accepted report is logged at debug only: no line is even built on the hot path when debug is off.
    if (status === 200 && !deps.logger.isLevelEnabled('debug')) return;
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

  const summarise = () => {
    for (const s of deps.refusalLog.flush())
      deps.logger.info(
        { source: s.source, suppressed: s.suppressed, windowSeconds: REFUSAL_LOG_WINDOW_MS / 1000 },
        'webhook refusals of an unauthenticated source not logged one by one',
      );
  };
  const timer = setInterval(summarise, REFUSAL_LOG_WINDOW_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    summarise();
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
