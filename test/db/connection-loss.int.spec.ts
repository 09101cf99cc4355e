import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import type { Logger } from '../../src/observability/log.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, spawnProjector, waitForProjection } from '../support/event-log.ts';
import {
  endOffsets,
  postStatus,
  spawnWebhook,
  testProvider,
  writeProvidersFile,
  type WebhookCall,
} from '../ingest/webhook-support.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Postgres restart ends every connection, the ones checked out of a pool too. pg-pool listens for errors
 * on idle clients only: a client in use whose server goes away emitted 'error' with no listener, and Node
 * ended the process (the issue's outside run: the gateway, the reconciler, a projector). These tests end
 * connections with pg_terminate_backend (57P01, what a restart sends) instead of restarting the server,
 * which every other test shares; test:faults restarts the real server.
 */
describe('connections the server ends (real Postgres)', () => {
  const stack = testStack();
  let admin: pg.Pool;

  /** Ends every backend of this run's database whose application_name is `name`; how many. */
  async function terminate(name: string): Promise<number> {
    const r = await admin.query<{ n: number }>(
      `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
        where application_name = $1 and datname = current_database() and pid <> pg_backend_pid()`,
      [name],
    );
    return r.rows[0]!.n;
  }

  beforeAll(() => {
    admin = createPool(stack.databaseUrl, { max: 1, applicationName: 'connection-loss-admin' });
  });
  afterAll(async () => {
    await admin.end();
  });

  it('a client checked out of a pool whose connection is ended is logged, not thrown; the pool goes on', async () => {
    const warned: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warned.push(message) } as unknown as Logger;
    const name = uniqueName('checked-out', '_');
    const { warnOfIdleConnectionErrors } = await import('../../src/db/client.ts');
    const pool = createPool(stack.databaseUrl, { max: 2, applicationName: name });
    warnOfIdleConnectionErrors(pool, () => logger);
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => uncaught.push(e);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const client = await pool.connect();
      // Out of the pool, as in a transaction between two statements.
      await client.query('begin');
      expect(client.listenerCount('error')).toBeGreaterThan(0);
      expect(await terminate(name)).toBe(1);
      for (let i = 0; i < 100 && !warned.some((w) => w.includes('in use')); i++) await sleep(20);
      expect(warned).toContain(
        'the server closed a database connection in use; its statement fails, the pool opens another',
      );
      await expect(client.query('select 1')).rejects.toThrow();
      client.release();
      expect(pool.totalCount).toBe(0);
      const again = await pool.query<{ one: number }>('select 1 as one');
      expect(again.rows[0]!.one).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await pool.end();
    }
  });

  it('a webhook and a projector whose connections are ended again and again under load go on: 200 or 503 with Retry-After, never 500; every 200 in the log and folded', async () => {
    const A = testProvider('pg-loss');
    const providersFile = writeProvidersFile([A]);
    const log = await freshEventLog(4);
    const projection = await freshProjection('pg_loss');
    await migratePlatform(stack.databaseUrl);
    // Their own application_name (the connection string's wins over the code's), so that only this
    // test's processes lose their connections, not another test's sharing the database.
    const webhookApp = uniqueName('webhook', '_');
    const projectorApp = uniqueName('projector', '_');
    const url = (app: string) =>
      `${stack.databaseUrl}${stack.databaseUrl.includes('?') ? '&' : '?'}application_name=${app}`;
    const swaps = Array.from({ length: 50 }, (_, i) => `${uniqueName('s')}-${i}`);
    await projection.pool.query(
      `insert into platform.created_swaps (swap_id, provider_id, created_at) select unnest($1::text[]), $2, now()`,
      [swaps, A.id],
    );
    const webhook = await spawnWebhook({
      DATABASE_URL: url(webhookApp),
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: log.topic,
      PROJECTION_SCHEMA: projection.schema,
      PROVIDERS_FILE: providersFile,
      KAFKA_CLIENT_ID: 'pg-loss-webhook',
    });
    const projector = spawnProjector({
      topic: log.topic,
      schema: projection.schema,
      group: uniqueName('pg-loss'),
      env: { DATABASE_URL: url(projectorApp) },
    });
    const results: WebhookCall[] = [];
    try {
      const before = await endOffsets(stack.kafkaBrokers, log.topic);
      let loading = true;
      // 16 partners' connections posting reports as fast as they are answered; the 503s are retried later.
      const load = Promise.all(
        Array.from({ length: 16 }, async (_, c) => {
          for (let i = c; loading; i += 16) {
            const swapId = swaps[i % swaps.length]!;
            const body = { providerId: A.id, providerStatus: 'PENDING', amount: String(i) };
            results.push(await postStatus(webhook.url, swapId, body, { 'x-api-key': A.key.key }));
          }
        }),
      );
      let ended = 0;
      for (let round = 0; round < 8; round++) {
        await sleep(400);
        ended += await terminate(webhookApp);
        ended += await terminate(projectorApp);
      }
      await sleep(1500);
      loading = false;
      await load;

      const byStatus = new Map<number, number>();
      for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      console.log(
        `connections ended ${ended}; webhook answers ${[...byStatus].map(([s, n]) => `${s}:${n}`).join(' ')}`,
      );
      expect(ended).toBeGreaterThan(8);
      expect([...byStatus.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
      for (const r of results.filter((x) => x.status === 503)) expect(r.headers['retry-after']).toBeDefined();
      const ok = byStatus.get(200) ?? 0;
      expect(ok).toBeGreaterThan(100);
      // Both processes are alive, and every acknowledged report is in the log and folded, once.
      expect(projector.exitCode).toBeNull();
      expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + BigInt(ok));
      await waitForProjection(projection.pool, log.topic, 60_000);
      const journal = await projection.pool.query<{ n: number }>(
        `select count(*)::int as n from event_journal where event_type = 'StatusReported'`,
      );
      expect(journal.rows[0]!.n).toBe(ok);
      // Idempotent producers with unlimited retries: kafkajs no longer warns that they "may invalidate EoS".
      expect(projector.output() + webhook.output()).not.toMatch(/invalidate EoS/);
    } finally {
      expect(await webhook.stop()).toBe(0);
      projector.kill('SIGTERM');
      // Its own last lines, should its stop ever fail: what it was doing when the signal came.
      expect(await projector.exited, projector.output().slice(-4000)).toBe(0);
      await log.close();
      await projection.pool.end();
    }
  });
});
