import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migratePlatform } from '../../src/db/migrate.ts';
import { startWebhook, type RunningWebhook } from '../../src/ingest/webhook/run.ts';
import { createLogger } from '../../src/observability/log.ts';
import { pollingSet } from '../../src/poller/set.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import { postStatus, testProvider, writeProvidersFile } from './webhook-support.ts';

/**
 * Issue 13: a swapId is unique per partner only. Two partners issue the same swapId; on the real stack
 * each swap is polled, reaches FINISHED by its own partner's webhook, is reconciled and posts its own
 * ledger entry, and neither partner's report touches the other's swap.
 */
describe('two partners, one swapId (real HTTP, Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const A = testProvider('same-a');
  const B = testProvider('same-b');
  const swapId = uniqueName('shared');
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let webhook: RunningWebhook;
  let platform: pg.Pool;
  const quiet = createLogger({ level: 'silent' });

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    projection = await freshProjection('two_partners');
    log = await freshEventLog(4);
    const config = {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.split(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: log.topic,
      KAFKA_CLIENT_ID: 'two-partners-test',
      PROJECTION_SCHEMA: projection.schema,
      DLQ_TOPIC: `${log.topic}.dlq`,
    };
    projector = await startProjector(config, quiet);
    webhook = await startWebhook(
      {
        ...config,
        KAFKA_SEND_TIMEOUT_MS: 10_000,
        PROVIDERS_FILE: writeProvidersFile([A, B]),
        PROVIDER_REFRESH_MS: 60_000,
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_PORT: 0,
        WEBHOOK_BODY_LIMIT_BYTES: 4096,
      },
      quiet,
    );
    platform = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    await log.append([
      swapCreated(swapId, { providerId: A.id, request: { amountFrom: '0.01' } }),
      swapCreated(swapId, { providerId: B.id, request: { amountFrom: '0.02' } }),
    ]);
    await waitForProjection(projection.pool, log.topic);
  });

  afterAll(async () => {
    await webhook?.stop();
    await projector?.stop();
    await platform?.end();
    await log?.close();
    await projection?.pool.end();
  });

  it('both swaps are created and both are in the polling set', async () => {
    const rows = await projection.pool.query(
      'select provider_id, amount_from from swaps where swap_id = $1 order by provider_id',
      [swapId],
    );
    expect(rows.rows).toEqual(
      [
        { provider_id: A.id, amount_from: '0.01' },
        { provider_id: B.id, amount_from: '0.02' },
      ].sort((x, y) => (x.provider_id < y.provider_id ? -1 : 1)),
    );
    const set = (await pollingSet(projection.pool, { providerIds: [A.id, B.id] })).filter(
      (s) => s.swapId === swapId,
    );
    expect(set.map((s) => s.providerId).sort()).toEqual([A.id, B.id].sort());
  });

  it('each partner finishes its own swap by webhook; reconciled and posted apart', async () => {
    const finish = (p: typeof A, amount: string) =>
      postStatus(
        webhook.url,
        swapId,
        {
          providerId: p.id,
          providerStatus: 'FINISHED',
          amount,
          payinTransactionId: `in-${p.id}`,
          transactionHash: `out-${p.id}`,
        },
        { 'x-api-key': p.key.key },
      );
    expect((await finish(A, '0.25')).status).toBe(200);
    // B's report lands on B's own swap with the same id, never on A's.
    expect((await finish(B, '0.5')).status).toBe(200);
    await waitForProjection(projection.pool, log.topic);
    const swaps = await projection.pool.query(
      'select provider_id, status, final, amount_to, payout_transaction_id from swaps where swap_id = $1',
      [swapId],
    );
    const byProvider = Object.fromEntries(swaps.rows.map((r) => [r.provider_id, r]));
    expect(byProvider[A.id]).toMatchObject({
      status: 'FINISHED',
      final: true,
      amount_to: '0.25',
      payout_transaction_id: `out-${A.id}`,
    });
    expect(byProvider[B.id]).toMatchObject({
      status: 'FINISHED',
      final: true,
      amount_to: '0.5',
      payout_transaction_id: `out-${B.id}`,
    });

    const reconciler = new Reconciler({
      projection: projection.pool,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: quiet,
      confirmWaitMs: 0,
    });
    expect(await reconciler.drainQueue()).toBe(2);
    await waitForProjection(projection.pool, log.topic);
    const verdicts = await projection.pool.query(
      'select provider_id from reconciliations where swap_id = $1 order by provider_id',
      [swapId],
    );
    expect(verdicts.rows.map((r) => r.provider_id)).toEqual([A.id, B.id].sort());

    const payouts = await projection.pool.query(
      `select provider_id, amount from ledger_postings where swap_id = $1 and account = 'user_payout'`,
      [swapId],
    );
    expect(Object.fromEntries(payouts.rows.map((r) => [r.provider_id, r.amount]))).toEqual({
      [A.id]: '0.25',
      [B.id]: '0.5',
    });
  });
});
