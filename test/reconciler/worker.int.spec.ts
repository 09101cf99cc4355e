import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { MetricsRegistry } from '../../src/observability/metrics.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { loadProviders } from '../../src/providers/store.ts';
import { parseProvidersFile } from '../../src/providers/file.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli } from '../support/cli.ts';

// The public test vector of docs/architecture.md: a real secp256k1-signed payload, BTC -> BAT.
const VECTOR = {
  payload:
    'CipiYzFxYXIwc3Jycjd4Zmt2eTVsNjQzbHlkbnc5cmU1OWd0enp3ZjVtZHEaKmJjMXFhcjBzcnJyN3hma3Z5NWw2NDNseWRudzlyZTU5Z3R6endmNHRlcSoqMHhiNzk0ZjVlYTBiYTM5NDk0Y2U4Mzk2MTNmZmZiYTc0Mjc5NTc5MjY4OgNCVENCA0JBVEoCBH5SBgV0-95gAGIgNQrqDJf3R_HQ92CBRhSkdSOAGxrrfQvLuqKk9Gv4GEs=',
  signature: 'zGcNUYKM8sLxvT7zPU1C8vrMmanVlUroELnAeil4weo1LCk0zUBRse5-3Acv7I7II90xVTIxm26BnxRbZvVmTQ==',
  publicKey:
    '0478d5facdae2305f48795d3ce7d9244f5060d2f800901da5746d1f4177ae8d7bbe63f3870efc0d36af8f91962811e1d8d9df91ce3b3ea2cd9f550c7d465f8b7b3',
};

/** A SwapCreated whose request matches the vector's payload: 1150 sat in, 6e12 atomic BAT (0.000006) out. */
function vectorSwap(swapId: string, providerId: string) {
  return swapCreated(swapId, {
    providerId,
    time: '2026-06-01T00:00:00.000Z',
    request: {
      tradeMethod: 'float',
      amountFrom: '0.0000115',
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: 'BAT',
      payoutAddress: '0xb794f5ea0ba39494ce839613fffba74279579268',
      refundAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf4teq',
      nonce: '350aea0c97f747f1d0f760814614a47523801b1aeb7d0bcbbaa2a4f46bf8184b',
      slippage: '0.01',
    },
    created: {
      payinAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      providerSigPayload: VECTOR.payload,
      providerSigSignature: VECTOR.signature,
      providerFees: '0.0000001',
      referralFees: '0.00000005',
      payoutNetworkFees: '0.000001',
      signedAmountToProvider: '1150',
      signedAmountToWallet: '6000000000000',
    },
  });
}

const finished = (swapId: string, providerId: string, amount: string) =>
  statusReported(
    swapId,
    'FINISHED',
    {
      amount,
      providerFees: '0.0000001',
      referralFees: '0.00000005',
      payoutNetworkFees: '0.000001',
      payinTransactionId: 'in',
      payoutTransactionId: 'out',
    },
    { providerId },
  );

describe('reconciler worker (real stack)', () => {
  const stack = testStack();
  const providerId = uniqueName('vector', '_').replaceAll('_', '-');
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let schema: string;
  let projection: pg.Pool;
  let platform: pg.Pool;
  let projector: RunningProjector;
  let reconciler: Reconciler;
  const metrics = new MetricsRegistry();
  const lines: { level: number; msg: string; verdict?: string; failing?: { name: string }[] }[] = [];
  const logger = createLogger({ level: 'info' });
  logger.info = ((obj: object, msg: string) => lines.push({ level: 30, msg, ...obj })) as never;
  logger.warn = ((obj: object, msg: string) => lines.push({ level: 40, msg, ...obj })) as never;

  beforeAll(async () => {
    log = await freshEventLog(3);
    schema = uniqueName('recon', '_');
    await migrateProjection(stack.databaseUrl, schema);
    await migratePlatform(stack.databaseUrl);
    projection = createPool(stack.databaseUrl, { searchPath: schema });
    platform = createPool(stack.databaseUrl);
    await loadProviders(
      platform,
      parseProvidersFile(
        `providers:
  - id: ${providerId}
    client: { baseUrl: 'http://127.0.0.1:9' }
    webhookKeys: []
    payloadKeys:
      - { keyId: vector, curve: secp256k1, publicKey: '${VECTOR.publicKey}', validFrom: '2025-01-01T00:00:00Z' }
`,
      ),
    );
    projector = await startProjector(projectionConfig(log, schema), createLogger({ level: 'silent' }));
    reconciler = new Reconciler({
      projection,
      platform,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger,
      metrics,
    });
  });

  afterAll(async () => {
    await projector?.stop();
    await projection?.end();
    await platform?.end();
    await log?.close();
  });

  it('takes a swap from the queue when it becomes final, appends SwapReconciled, and the projector clears the queue', async () => {
    await log.append([vectorSwap('rv-1', providerId), finished('rv-1', providerId, '0.000005')]);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select swap_id from reconciliation_queue`)).rows).toEqual([
      { swap_id: 'rv-1' },
    ]);

    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(`select verdict, checks from reconciliations where swap_id = 'rv-1'`);
    expect(rec.rows[0].verdict).toBe('MATCHED');
    const checks = Object.fromEntries(
      rec.rows[0].checks.map((c: { name: string; verdict: string }) => [c.name, c.verdict]),
    );
    expect(checks).toMatchObject({
      'signature.valid': 'MATCHED',
      'payload.currency_from': 'MATCHED',
      'payload.amount_to_provider': 'MATCHED',
      'amount.to_wallet': 'MATCHED',
      'fee.provider': 'MATCHED',
      'hash.payout': 'MATCHED',
    });
    expect((await projection.query(`select * from reconciliation_queue`)).rows).toEqual([]);
    expect(await reconciler.drainQueue()).toBe(0);
    expect(await metrics.expose()).toContain(
      `swap_ledger_reconciliation_verdicts_total{provider="${providerId}",verdict="MATCHED"} 1`,
    );
  });

  it('reports a final amount below the signed one (less the slippage) as MISMATCH, logged at warn with the check', async () => {
    // User side: 0.0000049 against 0.000006 signed less the 0.000001 network fee estimate = 0.000005: 2% short,
    // beyond 1% slippage. Partner side: 0.0000049 + 0.000001 = 0.0000059 against 0.000006: 1.67% short.
    await log.append([vectorSwap('rv-2', providerId), finished('rv-2', providerId, '0.0000049')]);
    await waitForProjection(projection, log.topic);
    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(`select verdict, checks from reconciliations where swap_id = 'rv-2'`);
    expect(rec.rows[0].verdict).toBe('MISMATCH');
    const amount = rec.rows[0].checks.find((c: { name: string }) => c.name === 'amount.to_wallet');
    expect(amount).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0.000005',
      actual: '0.0000049',
      delta: '-0.0000001',
    });
    const warn = lines.find((l) => l.level === 40 && l.msg === 'swap reconciled: MISMATCH');
    expect(warn?.failing?.map((c) => c.name)).toEqual(['amount.to_wallet', 'amount.partner_side']);
  });

  it('queues a corrected swap again and reconciles the correction', async () => {
    const fix = (await import('../../src/testing/events.ts')).swapCorrected(
      'rv-2',
      { amount: '0.000005', reason: 'partner statement', operator: 'alice' },
      { providerId },
    );
    await log.append([fix]);
    await waitForProjection(projection, log.topic);
    expect((await projection.query(`select queued_by_event_id from reconciliation_queue`)).rows).toEqual([
      { queued_by_event_id: fix.eventId },
    ]);
    expect(await reconciler.drainQueue()).toBe(1);
    await waitForProjection(projection, log.topic);
    const rec = await projection.query(
      `select verdict, based_on_event_id from reconciliations where swap_id = 'rv-2'`,
    );
    expect(rec.rows[0]).toEqual({ verdict: 'MATCHED', based_on_event_id: fix.eventId });
  });

  it('reconcile --swap prints every check and the verdict history; --dry-run appends nothing', async () => {
    const env = { ...projectionConfig(log, schema) };
    const r = await runCli(['reconcile', '--swap', `${providerId}/rv-1`, '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/verdict MATCHED/);
    // User side: the amount alone against the signed figure less the creation's network fee estimate.
    expect(r.stdout).toMatch(/MATCHED\s+amount\.to_wallet\s+expected 0\.000005\s+actual 0\.000005\s+delta 0/);
    expect(r.stdout).toMatch(
      /MATCHED\s+amount\.partner_side\s+expected 0\.000006\s+actual 0\.000006\s+delta 0/,
    );
    expect(r.stdout).toMatch(/verdict history[^\n]*\n[^\n]*MATCHED\s+based on/);
    expect(r.stdout).toContain('dry run: nothing appended');
    const bare = await runCli(['reconcile', '--swap', 'rv-1', '--dry-run'], env);
    expect(bare.code, bare.stderr).toBe(0); // one partner has rv-1: the bare id is enough
    const usage = await runCli(['reconcile'], env);
    expect(usage.code).toBe(2);
  });
});
