import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Logger } from '../../src/observability/log.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { generateApiKey, type NewApiKey } from '../../src/providers/api-keys.ts';
import { uniqueName } from '../support/context.ts';

/** A provider of this test run with one fresh webhook key. */
export interface TestProvider {
  readonly id: string;
  readonly key: NewApiKey;
  readonly yaml: string;
}

export function testProvider(
  label: string,
  options: { enabled?: boolean; rateLimit?: { perSecond: number; burst: number }; extra?: string } = {},
): TestProvider {
  const id = uniqueName(label);
  const key = generateApiKey();
  const yaml = [
    `  - id: ${id}`,
    `    enabled: ${options.enabled ?? true}`,
    `    client: { baseUrl: "https://${label}.example/v2", headers: { x-partner-key: "partner-secret-${label}" } }`,
    `    webhookKeys: [{ keyId: k1, sha256: "${key.sha256}" }]`,
    `    rateLimit: { perSecond: ${options.rateLimit?.perSecond ?? 5000}, burst: ${options.rateLimit?.burst ?? 5000} }`,
    ...(options.extra ? [options.extra] : []),
  ].join('\n');
  return { id, key, yaml };
}

export function writeProvidersFile(providers: TestProvider[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'webhook-providers-')), 'providers.yaml');
  // The fixtures write a partner header in clear: opted in, as the file must say (issue 41 point 12).
  writeFileSync(path, `allowLiteralSecrets: true\nproviders:\n${providers.map((p) => p.yaml).join('\n')}\n`);
  return path;
}

/** A pino logger whose lines are kept (parsed) for assertions. */
export function capturedLogger(level = 'info'): {
  logger: Logger;
  lines: Record<string, unknown>[];
  raw: () => string;
} {
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  const logger = pino(
    { level },
    {
      write(line: string) {
        raw += line;
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, lines, raw: () => raw };
}

/** Sum of the topic's end offsets: unchanged means nothing was appended. */
export async function endOffsets(brokers: string, topic: string): Promise<bigint> {
  const admin = createKafka({ brokers: brokers.split(','), clientId: 'test-offsets' }).admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + BigInt(p.high), 0n);
  } finally {
    await admin.disconnect();
  }
}

export interface WebhookCall {
  status: number;
  body: string;
  headers: Record<string, string>;
  json: () => Record<string, unknown>;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** One real HTTP POST to the status webhook (node:http: lighter than fetch when hundreds run at once). */
export function postStatus(
  baseUrl: string,
  swapId: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<WebhookCall> {
  const started = performance.now();
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const url = new URL(`${baseUrl}/webhook/${encodeURIComponent(swapId)}/status`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            headers: Object.fromEntries(
              Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
            ),
            json: () => JSON.parse(text) as Record<string, unknown>,
            ms: performance.now() - started,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A GET over the same keep-alive agent as postStatus. */
export function getText(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

/** A `swap-ledger webhook serve` process on a free port; resolves once it listens. */
export async function spawnWebhook(env: Record<string, string>): Promise<{
  url: string;
  /** The process's metrics and health listener. */
  metricsUrl: string;
  output: () => string;
  stop: () => Promise<number | null>;
  kill: () => void;
}> {
  const child = spawn(process.execPath, [BIN, 'webhook', 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ? null : code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook serve did not start:\n${output}`)), 30_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"[^\n]*webhook server listening/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`webhook serve exited (${code}):\n${output}`));
    });
  });
  const metricsUrl = /"url":"(http:\/\/[^"]+)"[^\n]*metrics and health listening/.exec(output)?.[1];
  if (!metricsUrl) throw new Error(`webhook serve logged no metrics listener:\n${output}`);
  return {
    url,
    metricsUrl,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill: () => child.kill('SIGKILL'),
  };
}

/** The value of one series in a Prometheus text exposition. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
