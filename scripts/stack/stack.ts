import { mkdirSync, writeFileSync } from 'node:fs';
import { kafkaAnswers, kafkaBrokers, kafkaService, startKafka } from './kafka.ts';
import { stackPaths } from './paths.ts';
import { postgresAnswers, resolvePostgres } from './postgres.ts';
import { runningPid, stopService } from './process.ts';
import { registryAnswers, registryService, registryUrl, startRegistry } from './registry.ts';

export interface StackEndpoints {
  KAFKA_BROKERS: string;
  SCHEMA_REGISTRY_URL: string;
  DATABASE_URL: string;
}

/**
 * Starts Kafka and the registry on loopback (Postgres is used, never started: see .ci/run), then writes
 * .stack/stack.env with the three connection variables. Starting twice is harmless.
 */
export async function stackUp(log: (line: string) => void = console.log): Promise<StackEndpoints> {
  const paths = stackPaths();
  mkdirSync(paths.dir, { recursive: true });
  const pgTarget = await resolvePostgres();
  log(`Postgres answers (${pgTarget.source})`);
  // Kafka and the registry start side by side: each JVM takes a few seconds.
  await Promise.all([startKafka(log), startRegistry(pgTarget, log)]);
  const endpoints: StackEndpoints = {
    KAFKA_BROKERS: kafkaBrokers(),
    SCHEMA_REGISTRY_URL: registryUrl(),
    DATABASE_URL: pgTarget.appUrl,
  };
  writeFileSync(
    paths.envFile,
    Object.entries(endpoints)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
  return endpoints;
}

export interface ComponentStatus {
  name: string;
  healthy: boolean;
  detail: string;
}

export async function stackStatus(): Promise<ComponentStatus[]> {
  const kafka = kafkaService();
  const registry = registryService();
  const kafkaPid = runningPid(kafka);
  const registryPid = runningPid(registry);
  let pgDetail: string;
  let pgHealthy = false;
  try {
    const target = await resolvePostgres();
    pgHealthy = await postgresAnswers(target.appUrl);
    pgDetail = `${target.source}, database ${new URL(target.appUrl).pathname.slice(1)}`;
  } catch (e) {
    pgDetail = (e as Error).message;
  }
  const started = (pid: number | undefined) =>
    pid === undefined ? 'not started by this stack' : `pid ${pid}`;
  return [
    {
      name: kafka.name,
      healthy: await kafkaAnswers(kafkaBrokers()),
      detail: `${kafkaBrokers()}, ${started(kafkaPid)}`,
    },
    {
      name: registry.name,
      healthy: await registryAnswers(registryUrl()),
      detail: `${registryUrl()}, ${started(registryPid)}`,
    },
    { name: 'Postgres', healthy: pgHealthy, detail: pgDetail },
  ];
}

/** Stops what stackUp started (by pid file and marker), nothing else. */
export async function stackDown(log: (line: string) => void = console.log): Promise<void> {
  for (const svc of [registryService(), kafkaService()]) {
    const stopped = await stopService(svc);
    log(stopped ? `${svc.name} stopped` : `${svc.name} was not running`);
  }
}
