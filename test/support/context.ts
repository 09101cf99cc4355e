import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type pg from 'pg';
import { createKafka } from '../../src/events/kafka.ts';
import { createTopicsReady } from '../../src/events/topics.ts';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';

export function testStack() {
  return inject('stack');
}

/** A name no other test or run uses: `<runId>.<label>.<random>` (topics) or with underscores (schemas). */
export function uniqueName(label: string, separator: '.' | '_' = '.'): string {
  const { runId } = testStack();
  return [runId, label, randomBytes(3).toString('hex')].join(separator).toLowerCase();
}

export function testKafka(clientId = 'swap-ledger-test') {
  return createKafka({ brokers: testStack().kafkaBrokers.split(','), clientId });
}

export async function createTopic(name: string, partitions = 1): Promise<void> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await createTopicsReady(admin, [{ topic: name, numPartitions: partitions }]);
  } finally {
    await admin.disconnect();
  }
}

/** A freshly migrated projection schema in this run's database, and a pool whose search_path is it. */
export async function freshProjection(label: string): Promise<{ schema: string; pool: pg.Pool }> {
  const schema = uniqueName(label, '_');
  const { databaseUrl } = testStack();
  await migrateProjection(databaseUrl, schema);
  return { schema, pool: createPool(databaseUrl, { searchPath: schema }) };
}

/** freshProjection, with `topic`'s checkpoints at offset 0 for `partitions`: where a batch fold begins. */
export async function freshProjectionAtStart(
  label: string,
  topic: string,
  partitions: readonly number[] = [0],
): Promise<{ schema: string; pool: pg.Pool }> {
  const p = await freshProjection(label);
  await p.pool.query(
    `insert into projector_checkpoints (topic, partition, next_offset)
     select $1, partition, 0 from unnest($2::int[]) as t(partition)`,
    [topic, partitions],
  );
  return p;
}
