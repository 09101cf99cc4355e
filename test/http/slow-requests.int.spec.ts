import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startConsole } from '../../src/console/run.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { startGateway, type RunningGateway } from '../../src/gateway/run.ts';
import { startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { createLogger } from '../../src/observability/log.ts';
import { TIMEOUT_CHECK_INTERVAL_MS } from '../../src/observability/http-timeouts.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog } from '../support/event-log.ts';
import { testProvider, writeProvidersFile } from '../ingest/webhook-support.ts';

/**
 * Issue 41 point 12 (S1): a request whose body never finishes used to hold its connection open for minutes
 * (330 s on the webhook and the console's /login). On the real processes, with real sockets: each listener
 * answers 408 and closes the connection once HTTP_REQUEST_TIMEOUT_MS has passed (Node checks every
 * TIMEOUT_CHECK_INTERVAL_MS). The test never closes a socket itself; a socket left open fails it at its
 * own deadline, far past the bound.
 */
const TIMEOUT_MS = 1000;

interface RawOutcome {
  readonly answer: string;
  /** The server ended the connection (the test never does). */
  readonly closedByServer: boolean;
}

/** Sends `text` and waits for the server to end the connection; `give-up` fails past `giveUpMs`. */
function rawCall(url: string, text: string, giveUpMs: number): Promise<RawOutcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `the server kept the connection open for ${giveUpMs} ms; it answered ${JSON.stringify(answer)}`,
        ),
      );
    }, giveUpMs);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ answer, closedByServer: true });
    });
  });
}

const halfBody = (path: string, contentType: string, part: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: ${contentType}\r\nContent-Length: 200\r\n\r\n${part}`;

describe('every HTTP listener answers an unfinished request 408 and closes it (real processes and sockets)', () => {
  const stack = testStack();
  const quiet = createLogger({ level: 'silent' });
  const P = testProvider('slow');
  const wallet = generateApiKey();
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let webhook: RunningWebhook;
  let gateway: RunningGateway;
  let consoleUrl: string;
  let stopConsole: () => Promise<void>;
  // Far past the bound (timeout + one check), so only a connection held open fails.
  const giveUpMs = (TIMEOUT_MS + TIMEOUT_CHECK_INTERVAL_MS) * 5;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    projection = await freshProjection('slow_requests');
    log = await freshEventLog(1);
    const base = {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.split(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: log.topic,
      DLQ_TOPIC: `${log.topic}.dlq`,
      KAFKA_CLIENT_ID: 'slow-requests-test',
      KAFKA_SEND_TIMEOUT_MS: 10_000,
      PROJECTION_SCHEMA: projection.schema,
      PROVIDERS_FILE: writeProvidersFile([P]),
      PROVIDER_REFRESH_MS: 60_000,
      HTTP_REQUEST_TIMEOUT_MS: TIMEOUT_MS,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: 0,
    };
    webhook = await startWebhook(
      { ...base, WEBHOOK_HOST: '127.0.0.1', WEBHOOK_PORT: 0, WEBHOOK_BODY_LIMIT_BYTES: 4096 },
      quiet,
    );
    gateway = await startGateway(
      {
        ...base,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: 0,
        GATEWAY_API_KEY_DIGESTS: [wallet.sha256],
        GATEWAY_QUOTE_MIN_VALIDITY_MS: 2000,
        GATEWAY_IDEMPOTENCY_LEASE_MS: 3000,
        OUTBOX_RELAY_INTERVAL_MS: 1000,
        OUTBOX_RELAY_BATCH: 100,
      },
      quiet,
    );
    const finance = uniqueName('finance', '_');
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    await ensureFinanceViews(client, projection.schema, finance).finally(() => client.end());
    const running = await startConsole(
      {
        ...base,
        CONSOLE_HOST: '127.0.0.1',
        CONSOLE_PORT: 0,
        CONSOLE_KEY_DIGESTS: [generateApiKey().sha256],
        CONSOLE_WORKER_HEALTH: [],
      },
      quiet,
      { financeSchema: finance },
    );
    consoleUrl = running.url;
    stopConsole = () => running.stop();
  }, 120_000);

  afterAll(async () => {
    await stopConsole?.();
    await gateway?.stop();
    await webhook?.stop();
    await log?.close();
    await projection?.pool.end();
  });

  const expect408 = (outcome: RawOutcome) => {
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(outcome.closedByServer).toBe(true);
  };

  it('the webhook: half a status body', async () => {
    const path = `/webhook/s1/status`;
    expect408(
      await rawCall(
        webhook.url,
        halfBody(path, 'application/json', `{"providerId":"${P.id}","amou`),
        giveUpMs,
      ),
    );
  });

  it('the gateway: half a quote body, with a wallet key (without one it answers 401 before reading)', async () => {
    const key = `X-Api-Key: ${wallet.key}\r\n`;
    expect408(
      await rawCall(gateway.url, halfBody('/v1/quotes', 'application/json', '{"providerId":', key), giveUpMs),
    );
  });

  it("the console's /login: half a form", async () => {
    expect408(
      await rawCall(
        consoleUrl,
        halfBody('/login', 'application/x-www-form-urlencoded', 'key=slk_'),
        giveUpMs,
      ),
    );
  });

  it('the metrics listener, and headers that never end or a connection that never sends a byte', async () => {
    expect408(await rawCall(webhook.ops!.url, 'GET /metrics HTTP/1.1\r\nHost: x\r\n', giveUpMs));
    expect408(await rawCall(webhook.url, 'POST /webhook/s1/status HTTP/1.1\r\nX-Api-Key: ', giveUpMs));
    expect408(await rawCall(gateway.url, '', giveUpMs));
  });

  it('a whole request is answered as before', async () => {
    const r = await fetch(`${webhook.url}/webhook/s1/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(401);
  });
});
