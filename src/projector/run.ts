import type { Config } from '../config/config.ts';
import { createPool } from '../db/client.ts';
import { migrateProjection } from '../db/migrate.ts';
import { EventCodec } from '../events/codec.ts';
import { createKafka } from '../events/kafka.ts';
import { settledWithin } from '../lifecycle/stop.ts';
import type { Logger } from '../observability/log.ts';
import { openOpsListener, type OpsConfig, type OpsListener } from '../observability/listener.ts';
import { dependencyChecks } from '../ops/health.ts';
import { MetricsRegistry } from '../observability/metrics.ts';
import { createProjectorMetrics } from './metrics.ts';
import { Projector, type ProjectorOptions } from './projector.ts';

/** How long a stop waits for the pool's connections to close. */
const POOL_CLOSE_MS = 2000;

export interface RunningProjector {
  projector: Projector;
  metrics: MetricsRegistry;
  /** The metrics and health listener (when METRICS_PORT is configured). */
  ops: OpsListener | undefined;
  stop(): Promise<void>;
}

/** Wires a projector from configuration: migrates its schema, then joins the consumer group. */
export async function startProjector(
  config: Pick<
    Config,
    | 'DATABASE_URL'
    | 'KAFKA_BROKERS'
    | 'SCHEMA_REGISTRY_URL'
    | 'EVENTS_TOPIC'
    | 'DLQ_TOPIC'
    | 'KAFKA_CLIENT_ID'
    | 'PROJECTION_SCHEMA'
  > &
    OpsConfig & { PROJECTOR_STALL_SECONDS?: number },
  logger: Logger,
  extra: Partial<Pick<ProjectorOptions, 'hooks' | 'onBatch' | 'maxBatchEvents' | 'groupId'>> & {
    metrics?: MetricsRegistry;
  } = {},
): Promise<RunningProjector> {
  const schema = config.PROJECTION_SCHEMA;
  await migrateProjection(config.DATABASE_URL, schema);
  const pool = createPool(config.DATABASE_URL, {
    searchPath: schema,
    max: 6, // the group commits in flight, the checkpoint reads after a join, and the metrics' queries
    applicationName: 'swap-ledger-projector',
  });
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `${config.KAFKA_CLIENT_ID}-projector`,
    logger,
  });
  const metrics = extra.metrics ?? new MetricsRegistry();
  const admin = kafka.admin(); // connected on the first scrape, not on the way to joining the group
  const measured = createProjectorMetrics(metrics, {
    admin,
    pool,
    topic: config.EVENTS_TOPIC,
    stallSeconds: config.PROJECTOR_STALL_SECONDS ?? 120,
  });
  const { metrics: _registry, ...options } = extra;
  const projector = new Projector({
    kafka,
    codec: new EventCodec(config.SCHEMA_REGISTRY_URL, config.EVENTS_TOPIC),
    pool,
    topic: config.EVENTS_TOPIC,
    deadLetterTopic: config.DLQ_TOPIC,
    groupId: extra.groupId ?? `${config.KAFKA_CLIENT_ID}-projector-${schema}`,
    logger,
    // kafkajs fetches again only once a fetch's batches are all done, so under a steady load a fetch brings
    // a few events for each of the 12 partitions. All of them are taken at once and folded together, in
    // one transaction (src/projector/group-commit.ts): a transaction per partition spent the fold's time on
    // round trips and commits.
    partitionsConsumedConcurrently: 24,
    ...options,
    onBatch: (b) => {
      measured.onBatch(b);
      options.onBatch?.(b);
    },
    onAssigned: (partitions) => measured.setAssigned(partitions),
  });
  // The listener first: a taken METRICS_PORT fails the start before the consumer joins the group.
  let ops: OpsListener | undefined;
  try {
    ops = await openOpsListener(config, metrics, [...dependencyChecks(config), measured.readiness], logger);
    await projector.start();
  } catch (e) {
    await projector.stop().catch(() => undefined);
    await ops?.close();
    await measured.close().catch(() => undefined);
    await pool.end();
    throw e;
  }
  logger.info({ topic: config.EVENTS_TOPIC, schema }, 'projector started');
  return {
    projector,
    metrics,
    ops,
    async stop() {
      await projector.stop();
      await ops?.close();
      await measured.close();
      // A fold still holding a connection when the consumer left without its goodbye: its transaction
      // either commits with its checkpoint or rolls back, so the stop need not wait for it long.
      await settledWithin(pool.end(), POOL_CLOSE_MS);
    },
  };
}
