import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { buildStatusMapping } from '../../src/swap/status.ts';
import { buildWebhookServer } from '../../src/ingest/webhook/server.ts';
import { ApiKeyIndex, generateApiKey } from '../../src/providers/api-keys.ts';
import type { RegistrySnapshot } from '../../src/providers/cache.ts';
import type { KnownSwap } from '../../src/ingest/webhook/server.ts';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';

/** What pg and Node throw while Postgres restarts, as the outside run saw them. */
function pgError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}
const RESTARTING: Error[] = [
  pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
  pgError('terminating connection due to administrator command', '57P01'),
  pgError('the database system is shutting down', '57P03'),
  pgError('the database system is starting up', '57P03'),
  pgError('Connection terminated unexpectedly'),
  pgError('timeout exceeded when trying to connect'),
  pgError('Client has encountered a connection error and is not queryable'),
  pgError('read ECONNRESET', 'ECONNRESET'),
  Object.assign(new AggregateError([pgError('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')]), {
    message: '',
  }),
];

function webhook(find: () => Promise<KnownSwap | undefined>) {
  const key = generateApiKey();
  const snapshot: RegistrySnapshot = {
    keys: new ApiKeyIndex([{ providerId: 'a', keyId: 'ka', sha256: key.sha256 }]),
    providers: new Map([
      [
        'a',
        {
          id: 'a',
          enabled: true,
          statusMapping: buildStatusMapping({ finished: 'FINISHED' }),
          rateLimit: { perSecond: 1000, burst: 1000 },
          webhookNetworkFees: 'extra' as const,
          pollIntervalSeconds: 60,
        },
      ],
    ]),
    loadedAt: 0,
  };
  const lines: Record<string, unknown>[] = [];
  const app = buildWebhookServer({
    appender: { append: async () => undefined },
    swaps: { find },
    registry: { snapshot: () => snapshot },
    logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }),
    bodyLimitBytes: 2048,
  });
  const post = () =>
    app.inject({
      method: 'POST',
      url: '/webhook/swap-1/status',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      payload: JSON.stringify({ providerId: 'a', providerStatus: 'finished', amount: '0.25' }),
    });
  return { app, post, lines };
}

describe('Postgres restarting under the webhook', () => {
  it('tells a database going away or not answering from a refusal of the statement', () => {
    for (const e of RESTARTING) expect(isDatabaseUnavailable(e), e.message).toBe(true);
    expect(isDatabaseUnavailable(new Error('x', { cause: RESTARTING[1] }))).toBe(true);
    for (const e of [
      pgError('relation "swaps" does not exist', '42P01'),
      pgError('duplicate key value violates unique constraint', '23505'),
      new Error('kaput'),
      undefined,
      'ECONNREFUSED',
    ])
      expect(isDatabaseUnavailable(e)).toBe(false);
  });

  it('answers 503 with Retry-After, never 500, while the swap cannot be looked up; a real bug stays a 500', async () => {
    for (const e of RESTARTING) {
      const h = webhook(async () => {
        throw e;
      });
      const res = await h.post();
      expect(res.statusCode, e.message).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.json()).toEqual({ error: 'temporarily unavailable; retry later' });
      const line = h.lines.find((l) => l.msg === 'webhook refused');
      expect(String(line?.reason)).toMatch(/^database unavailable/);
      await h.app.close();
    }
    const bug = webhook(async () => {
      throw pgError('column "nope" does not exist', '42703');
    });
    expect((await bug.post()).statusCode).toBe(500);
    await bug.app.close();
  });
});

describe('Kafka refusing an append', () => {
  it('answers 503 with Retry-After, not 500, when the producer fails (a leader change: out of order sequence)', async () => {
    const key = generateApiKey();
    const snapshot: RegistrySnapshot = {
      keys: new ApiKeyIndex([{ providerId: 'a', keyId: 'ka', sha256: key.sha256 }]),
      providers: new Map([
        [
          'a',
          {
            id: 'a',
            enabled: true,
            statusMapping: buildStatusMapping({ finished: 'FINISHED' }),
            rateLimit: { perSecond: 1000, burst: 1000 },
            webhookNetworkFees: 'extra' as const,
            pollIntervalSeconds: 60,
          },
        ],
      ]),
      loadedAt: 0,
    };
    const app = buildWebhookServer({
      appender: {
        append: async () => {
          throw Object.assign(new Error('The broker received an out of order sequence number'), {
            name: 'KafkaJSProtocolError',
          });
        },
      },
      swaps: { find: async () => ({ final: false, projected: true }) },
      registry: { snapshot: () => snapshot },
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 2048,
    });
    const res = await app.inject({
      method: 'POST',
      url: '/webhook/swap-1/status',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      payload: JSON.stringify({ providerId: 'a', providerStatus: 'finished', amount: '0.25' }),
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).not.toContain('queued');
    await app.close();
  });
});
