import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { runCli } from '../support/cli.ts';
import { createTopic, testStack, uniqueName } from '../support/context.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

/** `swap-ledger gateway serve` as an operator runs it. */
describe('gateway serve (a process)', () => {
  const stack = testStack();
  const base = {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
  };

  it('refuses to start without a wallet key digest, and with a key in clear (never echoed)', async () => {
    const none = await runCli(['gateway', 'serve', '--port', '0'], base);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/GATEWAY_API_KEY_DIGESTS/);
    const clear = await runCli(['gateway', 'serve'], {
      ...base,
      GATEWAY_API_KEY_DIGESTS: `slk_${'a'.repeat(43)}`,
    });
    expect(clear.code).toBe(2);
    expect(clear.stderr).toMatch(/GATEWAY_API_KEY_DIGESTS: holds an API key in clear/);
    expect(clear.stderr).not.toContain('aaaa');
  });

  it('serves with a key, refuses without one, and stops cleanly on SIGTERM', async () => {
    const topic = uniqueName('events');
    await createTopic(topic, 1);
    const wallet = generateApiKey();
    const child = spawn(process.execPath, [BIN, 'gateway', 'serve', '--port', '0'], {
      env: {
        PATH: process.env.PATH,
        ...base,
        EVENTS_TOPIC: topic,
        GATEWAY_API_KEY_DIGESTS: wallet.sha256,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const [url, metricsUrl] = await new Promise<[string, string]>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`gateway serve did not start:\n${output}`)), 30_000);
        const onData = (d: Buffer) => {
          output += d.toString();
          const m = /"url":"(http:\/\/[^"]+)"[^\n]*gateway listening/.exec(output);
          const ops = /"url":"(http:\/\/[^"]+)"[^\n]*metrics and health listening/.exec(output);
          if (m && ops) {
            clearTimeout(timer);
            resolve([m[1]!, ops[1]!]);
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exited.then((code) => reject(new Error(`gateway serve exited (${code}):\n${output}`)));
      });
      const anonymous = await fetch(`${url}/v1/providers/none/pairs`);
      expect(anonymous.status).toBe(401);
      const known = await fetch(`${url}/v1/providers/none/pairs`, { headers: { 'x-api-key': wallet.key } });
      expect(known.status).toBe(404);
      expect(await known.json()).toEqual({ error: 'no provider none' });
      expect((await fetch(`${url}/metrics`)).status).toBe(404);
      const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
      expect(metrics).toContain(
        'swap_ledger_gateway_refusals_total{route="/v1/providers/:providerId/pairs",reason="unauthorized"} 1',
      );
      expect(metrics).toMatch(/^swap_ledger_outbox_depth 0$/m);
      expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${metricsUrl}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('stopping gateway');
    expect(output).not.toContain(wallet.key);
  });
});
