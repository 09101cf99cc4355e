import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createTopic, testStack, uniqueName } from '../support/context.ts';
import { metricValue } from '../ingest/webhook-support.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

describe('reconciler run: metrics and readiness on its own listener (real stack)', () => {
  it('serves its queue gauges, /healthz and /readyz on loopback, and stops on SIGTERM', async () => {
    const stack = testStack();
    const topic = uniqueName('events');
    await createTopic(topic, 1);
    const schema = uniqueName('recon_ops', '_');
    await migrateProjection(stack.databaseUrl, schema);
    const child = spawn(process.execPath, [BIN, 'reconciler', 'run'], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: stack.databaseUrl,
        KAFKA_BROKERS: stack.kafkaBrokers,
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        EVENTS_TOPIC: topic,
        PROJECTION_SCHEMA: schema,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no metrics listener:\n${output}`)), 30_000);
        const look = () => {
          const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*metrics and health listening/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child.stdout.on('data', look);
        child.stderr.on('data', look);
      });
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(metricValue(text, 'swap_ledger_reconciliation_queue_depth')).toBe(0);
      expect(metricValue(text, 'swap_ledger_reconciliation_oldest_queued_age_seconds')).toBe(0);
      expect(text).toContain('# TYPE swap_ledger_reconciliation_final_to_verdict_seconds histogram');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { status: string }).status).toBe('ready');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
