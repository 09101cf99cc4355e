import { createServer } from 'node:net';
import {
  kafkaBrokers,
  kafkaInstance,
  removeKafkaInstance,
  startKafka,
  stopKafka,
  type KafkaInstance,
} from '../../scripts/stack/kafka.ts';

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * A broker of its own (scripts/stack/kafka.ts instance) that a test may stop and start: the shared
 * Kafka is used by other test files at the same time and is never stopped. Needs the native stack's
 * Java and jars (the same ones the shared broker runs on).
 */
export async function privateKafka(label: string, log: (line: string) => void = () => undefined) {
  const name = `${label}-${process.pid}`;
  const instance: KafkaInstance = kafkaInstance(name, {
    port: await freePort(),
    controllerPort: await freePort(),
  });
  await startKafka(log, instance);
  return {
    instance,
    brokers: kafkaBrokers(instance),
    start: () => startKafka(log, instance),
    stop: () => stopKafka(instance, 10_000),
    remove: () => removeKafkaInstance(instance),
  };
}
