import type { Config } from '../config/config.ts';
import type { Logger } from '../observability/log.ts';
import { EventCodec } from './codec.ts';
import { createKafka } from './kafka.ts';
import { EventAppender } from './producer.ts';

/** What an appender to the events topic is configured by (every process that writes events). */
export type AppenderConfig = Pick<
  Config,
  'KAFKA_BROKERS' | 'SCHEMA_REGISTRY_URL' | 'EVENTS_TOPIC' | 'KAFKA_CLIENT_ID' | 'KAFKA_SEND_TIMEOUT_MS'
> &
  // The replication the writer requires of its topic; absent: resolved against the cluster (as 0).
  Partial<Pick<Config, 'TOPIC_REPLICATION_FACTOR' | 'TOPIC_MIN_INSYNC_REPLICAS'>>;

/** The replication a writer requires of its topic, as configured (0: resolved against the cluster). */
export function requiredReplication(config: AppenderConfig) {
  return {
    replicationFactor: config.TOPIC_REPLICATION_FACTOR,
    minInsyncReplicas: config.TOPIC_MIN_INSYNC_REPLICAS,
  };
}

/** An appender to the configured events topic, started (schema registered, producer connected). */
export async function openAppender(
  config: AppenderConfig,
  role: string,
  logger?: Logger,
): Promise<EventAppender> {
  const appender = new EventAppender({
    kafka: createKafka({
      brokers: config.KAFKA_BROKERS,
      clientId: `${config.KAFKA_CLIENT_ID}-${role}`,
      logger,
    }),
    codec: new EventCodec(config.SCHEMA_REGISTRY_URL, config.EVENTS_TOPIC),
    topic: config.EVENTS_TOPIC,
    sendTimeoutMs: config.KAFKA_SEND_TIMEOUT_MS,
    logger,
    replication: requiredReplication(config),
  });
  await appender.start();
  return appender;
}
