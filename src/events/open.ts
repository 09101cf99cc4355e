import type { Config } from '../config/config.ts';
import type { Logger } from '../observability/log.ts';
import { EventCodec } from './codec.ts';
import { createKafka } from './kafka.ts';
import { EventAppender } from './producer.ts';

/** What an appender to the events topic is configured by (every process that writes events). */
export type AppenderConfig = Pick<
  Config,
  'KAFKA_BROKERS' | 'SCHEMA_REGISTRY_URL' | 'EVENTS_TOPIC' | 'KAFKA_CLIENT_ID' | 'KAFKA_SEND_TIMEOUT_MS'
>;

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
  });
  await appender.start();
  return appender;
}
