import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EventCodec } from '../../src/events/codec.ts';
import { createTopic, freshProjection, testStack, uniqueName } from '../support/context.ts';
import { testProvider, writeProvidersFile } from '../ingest/webhook-support.ts';

const WORKER = fileURLToPath(new URL('../../bin/swap-ledger-worker.mjs', import.meta.url));
const BOOTED = fileURLToPath(new URL('../fixtures/booted.mjs', import.meta.url));

/** A `swap-ledger-worker webhook serve` as `up` runs it; resolves with its exit code and output. */
function startWorker(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', BOOTED, WORKER, 'webhook', 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

/**
 * Workers start and stop like services: several started together on a fresh topic race on the registry's
 * PUT /config (Apicurio answers the losers 409, and they exited at start), and a SIGTERM that arrives while
 * one is still starting ended it by signal (143) instead of a clean 0.
 */
describe('workers starting and stopping (real processes, registry, Kafka, Postgres)', () => {
  const stack = testStack();

  it('two dozen codecs registering a fresh subject at once all succeed, with one schema id (three subjects)', async () => {
    // The registry's behaviour this guards against: of concurrent PUT /config on a new subject, some get 409.
    for (let round = 0; round < 3; round++) {
      const topic = uniqueName('race');
      const ids = await Promise.all(
        Array.from({ length: 24 }, () => new EventCodec(stack.registryUrl, topic).register()),
      );
      expect(new Set(ids).size).toBe(1);
      const level = await fetch(`${stack.registryUrl}/config/${encodeURIComponent(`${topic}-value`)}`);
      expect(await level.json()).toEqual({ compatibilityLevel: 'BACKWARD' });
    }
  });

  it('two webhooks started at once on a fresh topic all listen; a SIGTERM at any instant of a start ends it with 0', async () => {
    const provider = testProvider('start-stop');
    const projection = await freshProjection('start_stop');
    const topic = uniqueName('start-stop');
    await createTopic(topic, 2);
    const env = {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: topic,
      PROJECTION_SCHEMA: projection.schema,
      PROVIDERS_FILE: writeProvidersFile([provider]),
      KAFKA_CLIENT_ID: 'start-stop',
    };
    try {
      // Two processes race on the fresh subject as four did; the 24 codecs above race it harder in-process.
      const both = Array.from({ length: 2 }, () => startWorker(env));
      for (const w of both) {
        await expect
          .poll(() => w.output(), { timeout: 45_000, interval: 100 })
          .toMatch(/webhook server listening/);
      }
      for (const w of both) w.child.kill('SIGTERM');
      for (const w of both) expect(await w.exited).toEqual({ code: 0, signal: null });

      // A stop while it loads its modules, migrates, connects to the registry and Kafka, or just listens.
      // Counted from Node's boot (the preload's line), which runs before any line of the bin: out of any
      // code's reach, and 400 ms alone on a loaded machine. Loading the bin's own entry module follows the
      // preload, before its first line (a SIGTERM at once after the preload's line, at a load of 12, found
      // no listener yet): the first instant leaves it a margin.
      for (const after of [250, 500, 1000, 1800, 2800]) {
        const w = startWorker(env);
        await expect.poll(() => w.output(), { timeout: 30_000, interval: 5 }).toContain('node booted');
        await new Promise((r) => setTimeout(r, after));
        w.child.kill('SIGTERM');
        const end = await w.exited;
        expect(end, `SIGTERM ${after} ms after Node booted:\n${w.output()}`).toEqual({
          code: 0,
          signal: null,
        });
      }
    } finally {
      await projection.pool.end();
    }
  });
});
