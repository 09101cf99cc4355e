import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDatabase, withDatabase } from '../../scripts/stack/postgres.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { testStack, uniqueName } from '../support/context.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

export interface UpProcess {
  readonly child: ChildProcess;
  /** Its own database: `up` polls, watches and registers for every provider in its platform schema. */
  readonly databaseUrl: string;
  readonly schema: string;
  readonly financeSchema: string;
  readonly topic: string;
  readonly consoleKey: string;
  output(): string;
  /** Resolves with the first match of `pattern` in the output (from `from` on), or fails after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<RegExpExecArray>;
  /** The pid `up` reported for the worker's latest start. */
  pidOf(worker: string): number | undefined;
  readonly exited: Promise<number | null>;
}

/**
 * `swap-ledger up` with the demo as a process, on this run's stack with its own topic, schemas, ports and
 * database. The database is its own because `up` works for every provider of its platform schema: on the
 * run's shared one it polled other files' simulators (taking their swaps' leases) and two demos overwrote
 * each other's `demo-partner`.
 */
export async function startUp(extraArgs: string[] = []): Promise<UpProcess> {
  const stack = testStack();
  const database = uniqueName('up', '_');
  await ensureDatabase(stack.databaseUrl, database);
  const databaseUrl = withDatabase(stack.databaseUrl, database);
  const topic = uniqueName('events');
  const schema = uniqueName('up', '_');
  const financeSchema = uniqueName('finance', '_');
  const key = generateApiKey();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'up',
      '--finance-schema',
      financeSchema,
      '--demo-dir',
      mkdtempSync(join(tmpdir(), 'up-demo-')),
      ...extraArgs,
    ],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: stack.kafkaBrokers,
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        EVENTS_TOPIC: topic,
        DLQ_TOPIC: `${topic}.dlq`,
        TOPIC_PARTITIONS: '4',
        PROJECTION_SCHEMA: schema,
        KAFKA_CLIENT_ID: uniqueName('up'),
        WEBHOOK_PORT: '0',
        GATEWAY_PORT: '0',
        CONSOLE_PORT: '0',
        CONSOLE_KEY_DIGESTS: key.sha256,
        LOG_LEVEL: 'info',
        // Quicker partner steps than a person watching the demo wants: the test has a tight budget.
        DEMO_STEP_MS: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    databaseUrl,
    schema,
    financeSchema,
    topic,
    consoleKey: key.key,
    output: () => out,
    async waitFor(pattern, timeoutMs = 60_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(out.slice(from));
        if (m) return m;
        if (child.exitCode !== null)
          throw new Error(`up exited (${child.exitCode}) before ${pattern}:\n${out.slice(-3000)}`);
        if (Date.now() > deadline)
          throw new Error(`no ${pattern} in up's output within ${timeoutMs} ms:\n${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    pidOf(worker) {
      const all = [...out.matchAll(new RegExp(`started ${worker} \\(pid (\\d+)\\)`, 'g'))];
      const last = all.at(-1);
      return last ? Number(last[1]) : undefined;
    },
    exited,
  };
}
