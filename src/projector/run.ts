import type { Config } from '../config/config.ts';
import { createPool } from '../db/client.ts';
import { migrateProjection } from '../db/migrate.ts';
import { EventCodec, createKafka } from '../events/index.ts';
import type { Logger } from '../observability/log.ts';
import { Projector, type ProjectorOptions } from './projector.ts';

export interface RunningProjector {
  projector: Projector;
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
  >,
  logger: Logger,
  extra: Partial<Pick<ProjectorOptions, 'hooks' | 'onBatch' | 'maxBatchEvents' | 'groupId'>> = {},
): Promise<RunningProjector> {
  const schema = config.PROJECTION_SCHEMA;
  await migrateProjection(config.DATABASE_URL, schema);
  const pool = createPool(config.DATABASE_URL, {
    searchPath: schema,
    max: 4,
    applicationName: 'swap-ledger-projector',
  });
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `${config.KAFKA_CLIENT_ID}-projector`,
    logger,
  });
  const projector = new Projector({
    kafka,
    codec: new EventCodec(config.SCHEMA_REGISTRY_URL, config.EVENTS_TOPIC),
    pool,
    topic: config.EVENTS_TOPIC,
    deadLetterTopic: config.DLQ_TOPIC,
    groupId: extra.groupId ?? `${config.KAFKA_CLIENT_ID}-projector-${schema}`,
    logger,
    ...extra,
  });
  await projector.start();
  logger.info({ topic: config.EVENTS_TOPIC, schema }, 'projector started');
  return {
    projector,
    async stop() {
      await projector.stop();
      await pool.end();
    },
  };
}
