import type { Config } from '../config/config.ts';
import type { Logger } from '../observability/log.ts';
import type { EventAppender, AppenderOptions } from './producer.ts';
import { createKafka } from './kafka.ts';
import { brokerCount, createTopics, resolveReplication, type TopicReport } from './topics.ts';

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
  /** Observes each acknowledged batch's size (the webhook's metric). */
  onBatchSent?: AppenderOptions['onBatchSent'],
): Promise<EventAppender> {
  // Loaded here, not above: `topics create` and `up` create topics with kafkajs' admin alone, without the
  // codec (avsc, the registry client) and the producer's Kafka client.
  const [{ EventAppender }, { EventCodec }] = await Promise.all([
    import('./producer.ts'),
    import('./codec.ts'),
  ]);
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
    onBatchSent,
  });
  await appender.start();
  return appender;
}

/** The topics as configured (or as `topics create`'s flags override), created where missing. */
export type TopicsConfig = Pick<
  Config,
  | 'KAFKA_BROKERS'
  | 'KAFKA_CLIENT_ID'
  | 'EVENTS_TOPIC'
  | 'DLQ_TOPIC'
  | 'TOPIC_PARTITIONS'
  | 'TOPIC_REPLICATION_FACTOR'
  | 'TOPIC_MIN_INSYNC_REPLICAS'
>;

/**
 * One plan of the topics for its two callers, `topics create` and `up`: the events and dead-letter topics
 * created (an existing one reported, never changed), and the warning a one-broker cluster earns.
 */
export async function createConfiguredTopics(
  config: TopicsConfig,
): Promise<{ report: TopicReport[]; warning: string | undefined }> {
  const admin = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `${config.KAFKA_CLIENT_ID}-admin`,
  }).admin();
  await admin.connect();
  try {
    const replication = {
      replicationFactor: config.TOPIC_REPLICATION_FACTOR,
      minInsyncReplicas: config.TOPIC_MIN_INSYNC_REPLICAS,
    };
    const { warning } = resolveReplication(await brokerCount(admin), replication);
    const report = await createTopics(admin, {
      eventsTopic: config.EVENTS_TOPIC,
      dlqTopic: config.DLQ_TOPIC,
      partitions: config.TOPIC_PARTITIONS,
      ...replication,
    });
    return { report, warning };
  } finally {
    await admin.disconnect();
  }
}
