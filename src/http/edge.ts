import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { Teardown } from '../lifecycle/teardown.ts';
import type { Logger } from '../observability/log.ts';
import { duplicateJsonKey, duplicateKeyMessage } from './json-keys.ts';
import { listenerTimeouts } from '../observability/http-timeouts.ts';

/**
 * The Fastify kit of the two outside-facing edges (the partners' status webhook, the wallet's gateway): one
 * logger and no per-request lines (each edge logs one line of its own), a body limit, JSON bodies refused
 * with 400 when they repeat a key (./json-keys.ts), a deadline on every request (408, see
 * src/observability/http-timeouts.ts), no type coercion, 503
 * while closing, the operator's paths answering 404, and every framework error mapped to the edge's own
 * `{ error }` shape with a reason the edge logs. Routes, authentication and the log line stay with each edge.
 */

/** The metrics listener's paths: not found on an edge, so no one mistakes that port for the operator's. */
export const OPS_PATHS: ReadonlySet<string> = new Set(['/metrics', '/healthz', '/readyz']);

/** A refusal as the edge words it: the body's `error` and the reason kept for its log line and metrics. */
export interface Refusal {
  readonly error: string;
  readonly reason: string;
}

export interface EdgeOptions {
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  /** HTTP_REQUEST_TIMEOUT_MS: a request not wholly received by then gets 408 (default: http-timeouts.ts). */
  readonly requestTimeoutMs?: number;
  /** Keeps a refusal's reason on the request's own state. */
  readonly noteReason: (request: FastifyRequest, reason: string) => void;
  readonly refusals: {
    /** 400: the JSON Schema refused the request; `detail` is the validator's message. */
    invalid(detail: string): Refusal;
    /** 413. */
    readonly tooLarge: Refusal;
    /** Any other 4xx the framework raises (bad content type, bad JSON and the like). */
    client(error: FastifyError): Refusal;
    /** 500, after one error line `log` with the message and stack. */
    readonly internal: Refusal & { readonly log: string };
    /** 404: no route, or an operator's path. */
    readonly notFound: Refusal;
    /** 503 with Retry-After: Postgres cannot be reached or is restarting (default: UNAVAILABLE). */
    readonly unavailable?: Refusal;
  };
}

/** A JSON body that repeats a key: a 400 whose message names the key and where it is. */
export class DuplicateJsonKeyError extends Error {
  override name = 'DuplicateJsonKeyError';
  readonly statusCode = 400;
  readonly code = 'FST_ERR_DUPLICATE_JSON_KEY';
}

type JsonParser = (
  request: FastifyRequest,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
) => void;

/**
 * Fastify's JSON parser (prototype poisoning refused) and then the duplicate-key scan: JSON.parse keeps the
 * last of two equal keys, so a body that repeats one could mean one thing to us and another to any other
 * reader of it. Only text JSON.parse accepted is scanned.
 */
export function strictJsonParser(app: FastifyInstance): JsonParser {
  const parse = app.getDefaultJsonParser('error', 'error') as JsonParser;
  return (request, body, done) =>
    parse(request, body, (err, value) => {
      if (err) return done(err);
      const duplicate = duplicateJsonKey(body);
      if (duplicate) return done(new DuplicateJsonKeyError(duplicateKeyMessage(duplicate)));
      return done(null, value);
    });
}

/** Seconds an edge asks its caller to wait while Postgres cannot be reached (a restart takes a few). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const UNAVAILABLE: Refusal = {
  error: 'temporarily unavailable; retry later',
  reason: 'database unavailable',
};

export function buildEdgeServer(options: EdgeOptions): FastifyInstance {
  const { refusals, noteReason } = options;
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // Each edge logs one line per call from its onResponse hook, not fastify's per-request lines.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    ...listenerTimeouts(options.requestTimeoutMs),
    // No coercion: a number where a decimal string belongs is a 400, never a JS number.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    return503OnClosing: true,
  });

  const json = strictJsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    json(request, body as string, done),
  );

  const refuse = (request: FastifyRequest, status: number, r: Refusal) => {
    noteReason(request, r.reason);
    return { status, body: { error: r.error } };
  };

  // Registered first, so the edge's own authentication never answers for these paths.
  app.addHook('onRequest', async (request, reply) => {
    if (!OPS_PATHS.has(request.url.split('?')[0]!)) return undefined;
    const answer = refuse(request, 404, refusals.notFound);
    return reply.code(answer.status).send(answer.body);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    let answer;
    const status = error.statusCode ?? 500;
    if (error.validation) answer = refuse(request, 400, refusals.invalid(error.message));
    else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') answer = refuse(request, 413, refusals.tooLarge);
    else if (status >= 400 && status < 500) answer = refuse(request, status, refusals.client(error));
    else if (isDatabaseUnavailable(error)) {
      // Postgres restarting, failing over or refusing connections: nothing was stored, the caller retries.
      const r = refusals.unavailable ?? UNAVAILABLE;
      answer = refuse(request, 503, {
        error: r.error,
        reason: `${r.reason}: ${error.message}`.slice(0, 300),
      });
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
    } else {
      request.log.error({ err: error }, refusals.internal.log);
      answer = refuse(request, 500, refusals.internal);
    }
    return reply.code(answer.status).send(answer.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const answer = refuse(request, 404, refusals.notFound);
    return reply.code(answer.status).send(answer.body);
  });
  return app;
}

/** Listens, closes with the process's teardown, and says where: `http://host:port` (IPv6 hosts bracketed). */
export async function listenEdge(
  app: FastifyInstance,
  at: { readonly host: string; readonly port: number },
  teardown: Teardown,
): Promise<{ url: string; port: number }> {
  await app.listen({ host: at.host, port: at.port });
  teardown.add(() => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : at.port;
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  return { url: `http://${host}:${port}`, port };
}
