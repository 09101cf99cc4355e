import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { kafkaHealth } from '../../src/ops/health.ts';
import { mvn } from './maven.ts';
import { KAFKA_VERSION, repoRoot, stackPaths, stackPorts } from './paths.ts';
import { markerArg, runningPid, startDetached, waitUntilReady, type ServiceProcess } from './process.ts';

function kafkaService(): ServiceProcess {
  const { kafkaDir } = stackPaths();
  return {
    name: `Kafka ${KAFKA_VERSION}`,
    marker: markerArg('kafka'),
    pidFile: join(kafkaDir, 'kafka.pid'),
    logFile: join(kafkaDir, 'kafka.log'),
  };
}

/** The broker's classpath, resolved by Maven once and cached (re-resolved if a jar went missing). */
function classpath(kafkaDir: string): string {
  const file = join(kafkaDir, `classpath-${KAFKA_VERSION}.txt`);
  if (existsSync(file)) {
    const cp = readFileSync(file, 'utf8').trim();
    if (cp.split(':').every((jar) => existsSync(jar))) return cp;
  }
  mvn(
    [
      '-f',
      join(repoRoot, 'scripts/stack/kafka-deps.pom.xml'),
      'dependency:build-classpath',
      `-Dmdep.outputFile=${file}`,
    ],
    `Kafka ${KAFKA_VERSION} jars`,
  );
  return readFileSync(file, 'utf8').trim();
}

function writeConfig(kafkaDir: string): string {
  const { kafka, kafkaController } = stackPorts();
  const props = join(kafkaDir, 'server.properties');
  writeFileSync(
    props,
    [
      '# Written by scripts/stack on every start; single-node KRaft on loopback.',
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${kafkaController}`,
      `listeners=PLAINTEXT://127.0.0.1:${kafka},CONTROLLER://127.0.0.1:${kafkaController}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${kafka}`,
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      `log.dirs=${join(kafkaDir, 'data')}`,
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=12',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      // Topics are created on purpose (swap-ledger topics create), never by a typo.
      'auto.create.topics.enable=false',
      'delete.topic.enable=true',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(kafkaDir, 'log4j.properties'),
    [
      'log4j.rootLogger=INFO, stdout',
      'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
      'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
      'log4j.logger.kafka=INFO',
      'log4j.logger.org.apache.kafka=INFO',
      '',
    ].join('\n'),
  );
  return props;
}

/** KRaft needs its storage formatted once with a cluster id (22 characters of base64url). */
function formatStorage(cp: string, props: string, kafkaDir: string): void {
  if (existsSync(join(kafkaDir, 'data', 'meta.properties'))) return;
  const clusterId = randomBytes(16).toString('base64url');
  const r = spawnSync(
    'java',
    [
      '-cp',
      cp,
      `-Dlog4j.configuration=file:${join(kafkaDir, 'log4j.properties')}`,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      props,
      '--ignore-formatted',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`Kafka storage format failed:\n${r.stdout}\n${r.stderr}`);
}

export function kafkaBrokers(): string {
  return `127.0.0.1:${stackPorts().kafka}`;
}

export async function kafkaAnswers(brokers: string, timeoutMs = 3000): Promise<boolean> {
  return (await kafkaHealth(brokers.split(','), timeoutMs)).healthy;
}

export async function startKafka(log: (line: string) => void): Promise<void> {
  const svc = kafkaService();
  const { kafkaDir } = stackPaths();
  mkdirSync(kafkaDir, { recursive: true });
  const brokers = kafkaBrokers();
  if (runningPid(svc) !== undefined) {
    await waitUntilReady(svc, () => kafkaAnswers(brokers), 60_000);
    log(`Kafka already running at ${brokers}`);
    return;
  }
  if (await kafkaAnswers(brokers, 1000)) {
    throw new Error(
      `something else already answers as Kafka on ${brokers}; set STACK_KAFKA_PORT to another port`,
    );
  }
  const cp = classpath(kafkaDir);
  const props = writeConfig(kafkaDir);
  formatStorage(cp, props, kafkaDir);
  startDetached(
    svc,
    'java',
    [
      markerArg('kafka'),
      '-Xms256m',
      '-Xmx768m',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${join(kafkaDir, 'log4j.properties')}`,
      `-Dkafka.logs.dir=${kafkaDir}`,
      '-cp',
      cp,
      'kafka.Kafka',
      props,
    ],
    { cwd: kafkaDir },
  );
  await waitUntilReady(svc, () => kafkaAnswers(brokers), 90_000);
  log(`Kafka ${KAFKA_VERSION} ready at ${brokers}`);
}

export { kafkaService };
