import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  clusterInstances,
  kafkaAnswers,
  kafkaBrokers,
  kafkaService,
  startKafka,
  startKafkaCluster,
  stopKafka,
} from './kafka.ts';
import { stackPaths } from './paths.ts';
import { postgresAnswers, resolvePostgres } from './postgres.ts';
import { runningPid, stopService } from './process.ts';
import { registryAnswers, registryService, registryUrl, startRegistry } from './registry.ts';

export interface StackEndpoints {
  KAFKA_BROKERS: string;
  SCHEMA_REGISTRY_URL: string;
  DATABASE_URL: string;
}

/** How many brokers the stack in STACK_DIR runs (written by stackUp; 1 when it never ran with more). */
export function stackBrokers(): number {
  const file = join(stackPaths().dir, 'brokers');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || 1 : 1;
}

/** The bootstrap list of the stack in STACK_DIR: its one broker, or every node of its cluster. */
function brokerList(brokers: number): string {
  return brokers > 1
    ? clusterInstances(brokers)
        .map((i) => kafkaBrokers(i))
        .join(',')
    : kafkaBrokers();
}

/**
 * Starts Kafka and the registry on loopback (Postgres is used, never started: see .ci/run), then writes
 * .stack/stack.env with the three connection variables. Starting twice is harmless. `brokers` > 1: a KRaft
 * cluster of that many nodes (scripts/stack/cli.ts gives it a folder and ports of its own).
 */
export async function stackUp(
  log: (line: string) => void = console.log,
  options: { brokers?: number } = {},
): Promise<StackEndpoints> {
  const brokers = options.brokers ?? 1;
  const paths = stackPaths();
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(join(paths.dir, 'brokers'), `${brokers}\n`);
  const pgTarget = await resolvePostgres();
  log(`Postgres answers (${pgTarget.source})`);
  // Kafka and the registry start side by side: each JVM takes a few seconds.
  await Promise.all([
    brokers > 1 ? startKafkaCluster(log, clusterInstances(brokers)) : startKafka(log),
    startRegistry(pgTarget, log),
  ]);
  const endpoints: StackEndpoints = {
    KAFKA_BROKERS: brokerList(brokers),
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
  const brokers = stackBrokers();
  const registry = registryService();
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
  const kafka =
    brokers > 1
      ? await Promise.all(
          clusterInstances(brokers).map(async (i) => ({
            name: kafkaService(i).name,
            healthy: await kafkaAnswers(kafkaBrokers(i)),
            detail: `${kafkaBrokers(i)}, ${started(runningPid(kafkaService(i)))}`,
          })),
        )
      : [
          {
            name: kafkaService().name,
            healthy: await kafkaAnswers(kafkaBrokers()),
            detail: `${kafkaBrokers()}, ${started(runningPid(kafkaService()))}`,
          },
        ];
  return [
    ...kafka,
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
  const stopped = await stopService(registryService());
  log(stopped ? `${registryService().name} stopped` : `${registryService().name} was not running`);
  const brokers = stackBrokers();
  const nodes = brokers > 1 ? clusterInstances(brokers) : [undefined];
  await Promise.all(
    nodes.map(async (instance) => {
      const svc = kafkaService(instance);
      const done = instance ? await stopKafka(instance) : await stopService(svc);
      log(done ? `${svc.name} stopped` : `${svc.name} was not running`);
    }),
  );
}
