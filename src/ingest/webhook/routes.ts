import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tracedHandler } from '../../observability/tracing.ts';
import { AppendTimeoutError } from '../../events/producer.ts';
import { newEvent } from '../../events/keys.ts';
import { isDecimalText } from '../../money/decimal.ts';
import { reportDifferences, webhookReport } from '../../swap/report.ts';
import { MAX_PARTNER_TEXT, partnerTextProblem, PRINTABLE_PATTERN } from '../../swap/text.ts';
import { mapStatus } from '../../swap/status.ts';
import { authenticateWebhook, TOO_MANY_FAILURES_BODY, UNAUTHORIZED_BODY } from './auth.ts';
import { rateLimitHeaders } from '../../work/rate-limit.ts';
import type { WebhookDeps } from './deps.ts';

/**
 * POST /webhook/:swapId/status (partner interface v2), checked in this order:
 *   401 key missing or wrong, provider unknown or disabled, or key of another provider than `providerId`
 *   429 with Retry-After: the caller's address failed authentication more often than WEBHOOK_AUTH_FAILURE_BURST
 *       and WEBHOOK_AUTH_FAILURE_PER_MINUTE allow (a call that authenticates is never throttled by it)
 *   420 the provider's rate limit is exceeded (after authentication: nobody drains another's bucket)
 *   400 body not JSON, a field missing or mistyped, an amount or fee not a bounded decimal (40 integer, 36
 *       fraction digits), a text with a control character, a lone surrogate or too long, the path swapId likewise, checked
 *       before any query (413: body too large)
 *   404 no swap of that provider with that id, in the projection or in the gateway's created_swaps
 *   422 providerStatus not in the provider's mapping
 *   405 the swap is already final (as far as the projection shows); a report that contradicts it (another
 *       status, other figures) is recorded first as StatusContradicted (the swap does not change)
 *   200 {"message":"queued"} once Kafka acknowledged the StatusReported event (acks = all), after the
 *       swap's events still in the gateway's outbox (ensureKeyPublished)
 *   503 Kafka did not acknowledge within KAFKA_SEND_TIMEOUT_MS or refused the append, or the swap's outbox events could not be
 *       published first (never "queued"); or Postgres could not look the swap up (restarting, refusing
 *       connections: the edge kit's answer, Retry-After 2, src/http/edge.ts); 500 anything else.
 * A refusal stores nothing; each response is counted by status and each refusal logged with its reason.
 */

export const STATUS_ROUTE = '/webhook/:swapId/status';

/** The one 200 body, serialized once. */
const QUEUED_BODY = '{"message":"queued"}';

/** A body that could not be parsed: kept so authentication still runs first, then answered with 400. */
export class UnparsedBody {
  constructor(readonly problem: string) {}
}

/** What the route learned about a request, for the log line and the metric. */
export interface WebhookRequestState {
  /** The authenticated provider. */
  provider?: string;
  /** What an unauthenticated caller claimed in the body (truncated), for the log. */
  claimedProvider?: string;
  reason?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    webhook: WebhookRequestState | null;
  }
}

interface StatusBody {
  providerId: string;
  providerStatus: string;
  amount: string;
  providerFees?: string | null;
  networkFees?: string | null;
  payinTransactionId?: string | null;
  transactionHash?: string | null;
}

const text = (maxLength: number) => ({ type: 'string', maxLength, pattern: PRINTABLE_PATTERN });
const optionalText = (maxLength: number) => ({
  type: ['string', 'null'],
  maxLength,
  pattern: PRINTABLE_PATTERN,
});

export const statusBodySchema = {
  type: 'object',
  required: ['providerId', 'providerStatus', 'amount'],
  properties: {
    providerId: { ...text(64), minLength: 1 },
    providerStatus: { ...text(100), minLength: 1 },
    amount: text(80),
    providerFees: optionalText(80),
    networkFees: optionalText(80),
    payinTransactionId: optionalText(MAX_PARTNER_TEXT),
    transactionHash: optionalText(MAX_PARTNER_TEXT),
  },
} as const;

const paramsSchema = {
  type: 'object',
  required: ['swapId'],
  properties: { swapId: { ...text(MAX_PARTNER_TEXT), minLength: 1 } },
} as const;

function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  reason: string,
  body: Record<string, string>,
): FastifyReply {
  request.webhook = { ...request.webhook, reason };
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** Amounts and fees: decimal text, not negative; "" means "not known yet" (the fold treats it so). */
function badMoney(body: StatusBody): string | undefined {
  for (const field of ['amount', 'providerFees', 'networkFees'] as const) {
    const v = body[field];
    if (v === undefined || v === null || v === '') continue;
    if (!isDecimalText(v))
      return `${field} must be a decimal number written as a string, at most 40 integer and 36 fraction digits`;
    if (v.startsWith('-')) return `${field} must not be negative`;
  }
  return undefined;
}

/**
 * The texts again by partnerTextProblem: the schema's pattern, compiled with the `u` flag, takes a lone
 * surrogate (a JSON "\ud800" escape) for a character.
 */
function badText(swapId: string, body: StatusBody): string | undefined {
  const texts: [string, string | null | undefined][] = [
    ['swapId', swapId],
    ['providerStatus', body.providerStatus],
    ['amount', body.amount],
    ['providerFees', body.providerFees],
    ['networkFees', body.networkFees],
    ['payinTransactionId', body.payinTransactionId],
    ['transactionHash', body.transactionHash],
  ];
  for (const [field, v] of texts) {
    const problem = typeof v === 'string' ? partnerTextProblem(v) : undefined;
    if (problem) return `${field} ${problem}`;
  }
  return undefined;
}

export function registerStatusRoute(app: FastifyInstance, deps: WebhookDeps): void {
  app.post<{ Params: { swapId: string }; Body: StatusBody }>(
    STATUS_ROUTE,
    {
      schema: { params: paramsSchema, body: statusBodySchema },
      // Authentication, then the rate limit, then an unparsable body: before the schema is checked.
      preValidation: async (request, reply) => {
        const body = request.body as unknown;
        const claimed =
          typeof body === 'object' && body !== null && !(body instanceof UnparsedBody)
            ? (body as Record<string, unknown>).providerId
            : undefined;
        const auth = authenticateWebhook(deps.registry.snapshot(), request.headers['x-api-key'], claimed);
        if (!auth.ok) {
          request.webhook = {
            reason: `unauthorized: ${auth.reason}`,
            // For the log only: what the caller claimed, bounded; never a key or a digest.
            ...(typeof claimed === 'string' ? { claimedProvider: claimed.slice(0, 64) } : {}),
          };
          // Only failures take from the source's bucket: a partner's authenticated calls never do.
          const throttle = deps.authFailures.fail(request.ip);
          if (!throttle.allowed) {
            request.webhook.reason = `too many authentication failures: ${auth.reason}`;
            return reply
              .code(429)
              .header('retry-after', String(throttle.retryAfter))
              .type('application/json; charset=utf-8')
              .send(TOO_MANY_FAILURES_BODY);
          }
          return reply.code(401).type('application/json; charset=utf-8').send(UNAUTHORIZED_BODY);
        }
        request.webhook = { provider: auth.provider.id };
        const limit = deps.rateLimiter.take(auth.provider.id, auth.provider.rateLimit);
        reply.headers(rateLimitHeaders(limit));
        if (!limit.allowed)
          return refuse(request, reply, 420, 'rate limit exceeded', { error: 'rate limit exceeded' });
        if (body instanceof UnparsedBody)
          return refuse(request, reply, 400, body.problem, { error: body.problem });
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          return refuse(request, reply, 400, 'body must be a JSON object', {
            error: 'body must be a JSON object',
          });
        return undefined;
      },
    },
    tracedHandler('webhook status', async (request, reply) => {
      const { swapId } = request.params;
      const body = request.body;
      const providerId = request.webhook!.provider!;
      const problem = badText(swapId, body) ?? badMoney(body);
      if (problem) return refuse(request, reply, 400, problem, { error: problem });

      const swap = await deps.swaps.find(swapId, providerId);
      if (!swap)
        return refuse(request, reply, 404, 'no matching swap', {
          error: 'no swap matches this swapId and providerId',
          transactionId: swapId,
        });

      const provider = deps.registry.snapshot().providers.get(providerId);
      const mapped = provider ? mapStatus(provider.statusMapping, body.providerStatus) : undefined;
      if (!mapped)
        return refuse(request, reply, 422, 'providerStatus not mapped', {
          error: 'providerStatus is not recognized; nothing was stored',
        });
      const now = deps.now();
      const report = webhookReport(mapped, body, provider?.webhookNetworkFees ?? 'evidence');
      const origin = { providerId, swapId, source: 'webhook' as const };
      if (swap.final) {
        reply.header('allow', 'POST');
        const d = reportDifferences(swap, report);
        if (d.kind === 'final' && d.conflicts.length > 0) {
          // The partner still gets 405 and the swap does not change, but the contradiction is a fact.
          const contradiction = newEvent(
            'StatusContradicted',
            now,
            { report, knownStatus: swap.status },
            origin,
          );
          try {
            await deps.appender.append(contradiction);
          } catch (e) {
            if (!(e instanceof AppendTimeoutError)) throw e;
            reply.header('retry-after', '1');
            return refuse(request, reply, 503, 'Kafka did not acknowledge a contradiction in time', {
              error: 'the update was not accepted in time; retry later',
            });
          }
          return refuse(
            request,
            reply,
            405,
            `swap already final; contradiction recorded ${contradiction.eventId}: ${d.conflicts.map((c) => c.field).join(', ')}`,
            { error: 'the swap is already final' },
          );
        }
        return refuse(request, reply, 405, 'swap already final', { error: 'the swap is already final' });
      }

      const event = newEvent('StatusReported', now, report, origin);
      try {
        // The swap's own events still in the gateway's outbox go first (its SwapCreated, if Kafka was
        // down then), or the report would reach the log ahead of them. Any failure here: retry later.
        // A projected swap's SwapCreated is folded already: only a swap the gateway alone knows may still
        // have it waiting in the outbox (no round trip otherwise).
        if (!swap.projected) await deps.ensureKeyPublished?.(event.aggregateKey);
      } catch (e) {
        reply.header('retry-after', '1');
        return refuse(
          request,
          reply,
          503,
          `outbox events of the swap not published: ${(e as Error).message}`.slice(0, 300),
          {
            error: 'the update was not accepted in time; retry later',
          },
        );
      }
      try {
        await deps.appender.append(event);
      } catch (e) {
        // Not acknowledged, whatever Kafka said (a deadline, or an error of the producer after a leader
        // change): nothing was promised, the partner retries (a report written after all folds as a no-op).
        reply.header('retry-after', '1');
        const reason =
          e instanceof AppendTimeoutError
            ? 'Kafka did not acknowledge in time'
            : `Kafka refused the append: ${(e as Error).message}`.slice(0, 300);
        return refuse(request, reply, 503, reason, {
          error: 'the update was not accepted in time; retry later',
        });
      }
      request.webhook = { ...request.webhook, reason: `queued ${event.eventId}` };
      return reply.code(200).type('application/json; charset=utf-8').send(QUEUED_BODY);
    }),
  );
}
