import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { EventAppender, EventCodec } from '../../src/events/index.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { projectionLag } from '../../src/projector/lag.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import { createTopic, testKafka, testStack, uniqueName } from './context.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger.mjs', import.meta.url));

/** A fresh events topic of this run, its codec (subject registered) and an appender. */
export async function freshEventLog(partitions = 12) {
  const stack = testStack();
  const topic = uniqueName('events');
  const dlqTopic = `${topic}.dlq`;
  await createTopic(topic, partitions);
  await createTopic(dlqTopic, 1);
  const codec = new EventCodec(stack.registryUrl, topic);
  const appender = new EventAppender({
    kafka: testKafka('test-appender'),
    codec,
    topic,
    sendTimeoutMs: 15_000,
  });
  await appender.start();
  return {
    topic,
    dlqTopic,
    codec,
    appender,
    /** Appends in order, in chunks, each chunk one produce request. */
    async append(events: SwapEvent[]) {
      for (let i = 0; i < events.length; i += 500) await appender.appendAll(events.slice(i, i + 500));
    },
    close: () => appender.stop(),
  };
}

/** The configuration a projector, replay or CLI command of this run needs to use `log` and `schema`. */
export function projectionConfig(log: { topic: string; dlqTopic: string }, schema: string) {
  const stack = testStack();
  return {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers.split(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: log.topic,
    DLQ_TOPIC: log.dlqTopic,
    KAFKA_CLIENT_ID: 'test',
    PROJECTION_SCHEMA: schema,
  };
}

/** Waits until the projection in `pool`'s schema has folded everything the topic holds. */
export async function waitForProjection(pool: pg.Pool, topic: string, timeoutMs = 90_000): Promise<void> {
  const admin = testKafka('test-lag').admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const client = await pool.connect();
      let lag;
      try {
        lag = await projectionLag(admin, client, topic);
      } finally {
        client.release();
      }
      if (lag.every((p) => p.lag <= 0n)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `projection still behind on ${topic}: ${lag
            .filter((p) => p.lag > 0n)
            .map((p) => `p${p.partition}:${p.lag}`)
            .join(' ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.disconnect();
  }
}

export async function checksumOf(pool: pg.Pool, schema: string) {
  const client = await pool.connect();
  try {
    return await stateChecksum(client, schema);
  } finally {
    client.release();
  }
}

/** A `swap-ledger projector run` process against this run's stack. */
export function spawnProjector(opts: {
  topic: string;
  schema: string;
  group: string;
  maxBatch?: number;
  env?: Record<string, string>;
}): ChildProcess & { exited: Promise<number | null>; output: () => string } {
  const stack = testStack();
  const args = [BIN, 'projector', 'run', '--schema', opts.schema, '--group', opts.group];
  if (opts.maxBatch) args.push('--max-batch', String(opts.maxBatch));
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: opts.topic,
      DLQ_TOPIC: `${opts.topic}.dlq`,
      LOG_LEVEL: 'info',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ? null : code)),
  );
  return Object.assign(child, { exited, output: () => output });
}

/**
 * Replays the log from offset 0 into a fresh schema and says whether it equals the live projection (the
 * rebuild's schema dropped after), as `swap-ledger replay` does: the guarantee most files end on.
 */
export async function replayIsEqual(
  log: { topic: string; codec: EventCodec },
  projection: { schema: string; pool: pg.Pool },
  clientId: string,
): Promise<boolean> {
  const { replay } = await import('../../src/ops/replay.ts');
  const { createLogger } = await import('../../src/observability/log.ts');
  const result = await replay({
    databaseUrl: testStack().databaseUrl,
    kafka: testKafka(clientId),
    codec: log.codec,
    topic: log.topic,
    liveSchema: projection.schema,
    logger: createLogger({ level: 'silent' }),
  });
  await projection.pool.query(`drop schema if exists ${result.schema} cascade`);
  return result.equal;
}
