import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../observability/log.ts';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

export interface KafkaOptions {
  brokers: string[];
  clientId: string;
  logger?: Logger;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** kafkajs' own retries for metadata and connection; sends have their own deadline on top. */
  retries?: number;
}

/** The options each client of createKafka was made with: the appender's own client connects alike. */
const made = new WeakMap<Kafka, KafkaOptions>();

/** The brokers, client id and timeouts `kafka` was created with (createKafka only). */
export function kafkaOptionsOf(kafka: Kafka): KafkaOptions {
  const options = made.get(kafka);
  if (!options)
    throw new Error('a Kafka client made by createKafka is needed (its brokers are not readable otherwise)');
  return options;
}

/** One Kafka client factory so every part logs through pino and shares timeouts. */
export function createKafka(options: KafkaOptions): Kafka {
  const logger = options.logger;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { retries: options.retries ?? 5, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: logger ? logLevel.WARN : logLevel.NOTHING,
    logCreator:
      () =>
      ({ level, label, log }: LogEntry) => {
        if (!logger) return;
        const { message, ...extra } = log;
        // kafkajs logs every error answer of a broker at ERROR before its retrier takes it (the coordinator not
        // yet elected at a fresh start, a leader moving): a failure that outlasts the retries reaches our code
        // as a thrown error and is logged there, so the broker's answer itself is info.
        const retried = level === logLevel.ERROR && /^Response \w+\(/.test(String(message));
        logger[retried ? 'info' : (levels[level] ?? 'info')](
          { kafkajs: label, ...extra },
          `kafkajs: ${message}`,
        );
      },
  });
  made.set(kafka, options);
  return kafka;
}
