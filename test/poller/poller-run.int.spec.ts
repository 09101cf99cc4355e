import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { PartnerClient } from '../../src/partner/client.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig } from '../support/event-log.ts';
import { eventually, nonce, statusJournal, swapRow } from '../gateway/support.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

/**
 * `swap-ledger poller run` as an operator runs it: node-cron ticks every second, the catalog is synced
 * at start, a swap is polled until final and then leaves the polling set, SIGTERM stops it cleanly.
 */
describe('poller run (a process, on its cron schedule)', () => {
  const stack = testStack();
  const providerId = uniqueName('poller-run');
  let sim: PartnerSimulator;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let projector: RunningProjector;
  let file: string;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    [log, projection, sim] = await Promise.all([
      freshEventLog(2),
      freshProjection('poller_run'),
      startPartnerSimulator({ providerId }),
    ]);
    projector = await startProjector(
      projectionConfig(log, projection.schema),
      createLogger({ level: 'fatal', name: 'projector' }),
    );
    const key = sim.partnerKey();
    file = join(mkdtempSync(join(tmpdir(), 'poller-run-')), 'providers.yaml');
    writeFileSync(
      file,
      [
        'providers:',
        `  - id: ${providerId}`,
        `    client: { baseUrl: "${sim.url}" }`,
        `    payloadKeys: [{ keyId: ${key.keyId}, curve: ${key.curve}, publicKey: "${String(key.publicKey)}", validFrom: "${key.validFrom}" }]`,
        '    pollIntervalSeconds: 1',
        '',
      ].join('\n'),
    );
  }, 120_000);

  afterAll(async () => {
    await projector?.stop();
    await log?.close();
    await projection?.pool.end();
    await sim?.close();
  });

  const env = () => ({
    PATH: process.env.PATH,
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: log.topic,
    PROJECTION_SCHEMA: projection.schema,
    PROVIDERS_FILE: file,
    POLL_PROVIDERS: providerId,
    POLL_CRON: '* * * * * *',
    CATALOG_SYNC_CRON: '0 0 * * *',
    LOG_LEVEL: 'info',
  });

  it('polls a swap to its final status, then no more; syncs the catalog at start; stops on SIGTERM', async () => {
    const client = new PartnerClient({
      provider: providerId,
      baseUrl: sim.url,
      payloadKeys: [sim.partnerKey()],
    });
    const { swap } = await client.createFloatSwap({
      currencyFrom: 'btc',
      currencyTo: 'eth',
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: 'ETH',
      amount: '0.1',
      payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
      refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      nonce: nonce(),
    });
    await log.append([swapCreated(swap.swapId, { providerId })]);

    const child = spawn(process.execPath, [BIN, 'poller', 'run'], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the first poll to be projected', async () =>
        (await swapRow(projection.pool, swap.swapId))?.status === 'PENDING' ? true : undefined,
      );
      sim.advance(swap.swapId, 'FINISHED', undefined, { notify: false });
      const final = await eventually('the final poll to be projected', async () => {
        const r = await swapRow(projection.pool, swap.swapId);
        return r?.final ? r : undefined;
      });
      const report = sim.swap(swap.swapId)!.report as Record<string, string>;
      expect(final).toMatchObject({
        status: 'FINISHED',
        amount_to: report.amount,
        payout_network_fees: report.payoutNetworkFees,
        payout_transaction_id: report.payoutTransactionId,
      });
      // Final: out of the polling set (the projection says so), so no more GET /status for it.
      const calls = () => sim.calls('status').filter((c) => c.query.swapId === swap.swapId).length;
      await new Promise((r) => setTimeout(r, 1500));
      const settled = calls();
      await new Promise((r) => setTimeout(r, 2500));
      expect(calls()).toBe(settled);
      expect(
        (await statusJournal(projection.pool, swap.swapId)).map(
          (j) => `${j.source}:${j.status}:${j.outcome}`,
        ),
      ).toEqual(['poll:PENDING:applied', 'poll:FINISHED:applied']);
      const synced = await projection.pool.query(
        `select outcome, pairs from platform.catalog_syncs where provider_id = $1`,
        [providerId],
      );
      expect(synced.rows).toEqual([{ outcome: 'ok', pairs: 56 }]);
      // Its metrics listener (loopback, a free port): polls by result, the polling set, readiness.
      const ops = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*metrics and health listening/.exec(output)?.[1];
      expect(ops, output).toBeDefined();
      const text = await (await fetch(`${ops}/metrics`)).text();
      expect(text).toContain(`swap_ledger_poller_polls_total{provider="${providerId}",outcome="appended"} 2`);
      expect(text).toMatch(/^swap_ledger_poller_polling_set_size 0$/m);
      expect(text).toMatch(/^swap_ledger_poller_paused_providers 0$/m);
      expect((await fetch(`${ops}/readyz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('stopping poller');
  });
});
