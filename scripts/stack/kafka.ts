import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { kafkaHealth } from '../../src/ops/health.ts';
import { mvn } from './maven.ts';
import { KAFKA_VERSION, repoRoot, stackPaths, stackPorts } from './paths.ts';
import {
  markerArg,
  runningPid,
  startDetached,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from './process.ts';

/**
 * A broker of the native stack. The default instance `kafka` is the stack's (STACK_KAFKA_PORT,
 * .stack/kafka); another name is a private broker with its own ports, data dir (.stack/kafka-<name>)
 * and marker, which a test may stop and start without touching the shared one.
 */
export interface KafkaInstance {
  readonly name: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly dir: string;
  /** A node of a KRaft cluster of several (`stack:up --brokers 3`); none: a single node. */
  readonly cluster?: KafkaCluster;
}

/** The nodes of a loopback KRaft cluster: each a broker and a controller, one cluster id for all. */
export interface KafkaCluster {
  readonly nodeId: number;
  /** `controller.quorum.voters`: every node's id@host:controllerPort. */
  readonly voters: string;
  /** Where the cluster id every node is formatted with is kept. */
  readonly clusterIdFile: string;
  readonly size: number;
}

/**
 * The `brokers` nodes of a cluster in the stack's folder (STACK_DIR): node i (1-based) listens on
 * STACK_KAFKA_PORT + 2(i-1), its controller on the port after, its data in <STACK_DIR>/kafka-node<i>.
 */
export function clusterInstances(brokers: number): KafkaInstance[] {
  const { kafka } = stackPorts();
  const nodes = Array.from({ length: brokers }, (_, i) => ({
    nodeId: i + 1,
    port: kafka + 2 * i,
    controllerPort: kafka + 2 * i + 1,
  }));
  const voters = nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(',');
  const clusterIdFile = join(stackPaths().dir, 'kafka-cluster.id');
  return nodes.map((n) => ({
    name: `node${n.nodeId}`,
    port: n.port,
    controllerPort: n.controllerPort,
    dir: join(stackPaths().dir, `kafka-node${n.nodeId}`),
    cluster: { nodeId: n.nodeId, voters, clusterIdFile, size: brokers },
  }));
}

const INSTANCE_NAME = /^[a-z0-9][a-z0-9-]{0,40}$/;

export function kafkaInstance(
  name = 'kafka',
  ports?: { port: number; controllerPort: number },
): KafkaInstance {
  if (name === 'kafka') {
    const { kafka, kafkaController } = stackPorts();
    return {
      name,
      port: ports?.port ?? kafka,
      controllerPort: ports?.controllerPort ?? kafkaController,
      dir: stackPaths().kafkaDir,
    };
  }
  if (!INSTANCE_NAME.test(name)) throw new Error(`Kafka instance name "${name}" must be [a-z0-9-]`);
  if (!ports) throw new Error(`Kafka instance ${name} needs its own ports`);
  return { name, ...ports, dir: join(stackPaths().dir, `kafka-${name}`) };
}

const DEFAULT_INSTANCE = (): KafkaInstance => kafkaInstance();

function kafkaService(instance: KafkaInstance = DEFAULT_INSTANCE()): ServiceProcess {
  const isDefault = instance.name === 'kafka';
  return {
    name: isDefault ? `Kafka ${KAFKA_VERSION}` : `Kafka ${KAFKA_VERSION} (${instance.name})`,
    marker: markerArg(isDefault ? 'kafka' : `kafka-${instance.name}`),
    pidFile: join(instance.dir, 'kafka.pid'),
    logFile: join(instance.dir, 'kafka.log'),
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

function writeConfig(instance: KafkaInstance): string {
  const { port: kafka, controllerPort: kafkaController, dir: kafkaDir, cluster } = instance;
  const props = join(kafkaDir, 'server.properties');
  // A cluster replicates everything three ways (two copies at least to acknowledge), as production does;
  // a single node has one copy of everything.
  const replicas = cluster ? Math.min(3, cluster.size) : 1;
  const minIsr = replicas >= 3 ? 2 : 1;
  writeFileSync(
    props,
    [
      cluster
        ? `# Written by scripts/stack on every start; node ${cluster.nodeId} of a ${cluster.size}-node KRaft cluster on loopback.`
        : '# Written by scripts/stack on every start; single-node KRaft on loopback.',
      'process.roles=broker,controller',
      `node.id=${cluster?.nodeId ?? 1}`,
      `controller.quorum.voters=${cluster?.voters ?? `1@127.0.0.1:${kafkaController}`}`,
      `listeners=PLAINTEXT://127.0.0.1:${kafka},CONTROLLER://127.0.0.1:${kafkaController}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${kafka}`,
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      `log.dirs=${join(kafkaDir, 'data')}`,
      'num.partitions=1',
      `default.replication.factor=${replicas}`,
      `min.insync.replicas=${minIsr}`,
      `offsets.topic.replication.factor=${replicas}`,
      'offsets.topic.num.partitions=12',
      `transaction.state.log.replication.factor=${replicas}`,
      `transaction.state.log.min.isr=${minIsr}`,
      'group.initial.rebalance.delay.ms=0',
      // Topics are created on purpose (swap-ledger topics create), never by a typo.
      'auto.create.topics.enable=false',
      'delete.topic.enable=true',
      // A replica that lost its broker leaves the ISR within 10 s (the default 30 s), so acks=all goes on
      // with the two left sooner; a killed leader's successor never comes from outside the ISR.
      ...(cluster ? ['replica.lag.time.max.ms=10000', 'unclean.leader.election.enable=false'] : []),
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
function formatStorage(cp: string, props: string, kafkaDir: string, cluster?: KafkaCluster): void {
  if (existsSync(join(kafkaDir, 'data', 'meta.properties'))) return;
  // Never starting with '-' (one id in 64 would), which the tool's argument parser reads as an option:
  // Kafka's own Uuid.randomUuid() draws again for the same reason.
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
  // Every node of a cluster is formatted with the one id, drawn by the first node formatted.
  if (cluster) {
    if (existsSync(cluster.clusterIdFile)) clusterId = readFileSync(cluster.clusterIdFile, 'utf8').trim();
    else writeFileSync(cluster.clusterIdFile, `${clusterId}\n`);
  }
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

export function kafkaBrokers(instance: KafkaInstance = DEFAULT_INSTANCE()): string {
  return `127.0.0.1:${instance.port}`;
}

export async function kafkaAnswers(brokers: string, timeoutMs = 3000): Promise<boolean> {
  return (await kafkaHealth(brokers.split(','), timeoutMs)).healthy;
}

export async function startKafka(
  log: (line: string) => void,
  instance: KafkaInstance = DEFAULT_INSTANCE(),
): Promise<void> {
  const svc = kafkaService(instance);
  const kafkaDir = instance.dir;
  mkdirSync(kafkaDir, { recursive: true });
  const brokers = kafkaBrokers(instance);
  if (runningPid(svc) !== undefined) {
    await waitUntilReady(svc, () => kafkaAnswers(brokers), 60_000);
    log(`Kafka already running at ${brokers}`);
    return;
  }
  // A cluster's node answers only once a quorum of its controllers runs: not asked before it starts.
  if (!instance.cluster && (await kafkaAnswers(brokers, 1000))) {
    throw new Error(
      `something else already answers as Kafka on ${brokers}; set STACK_KAFKA_PORT to another port`,
    );
  }
  // The jars are resolved once, for every instance, in the default instance's folder.
  const cp = classpath(stackPaths().kafkaDir);
  const props = writeConfig(instance);
  formatStorage(cp, props, kafkaDir, instance.cluster);
  const isDefault = instance.name === 'kafka';
  startDetached(
    svc,
    'java',
    [
      svc.marker,
      '-Xms256m',
      isDefault ? '-Xmx768m' : '-Xmx384m',
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
  log(`Kafka ${KAFKA_VERSION} ready at ${brokers}${isDefault ? '' : ` (instance ${instance.name})`}`);
}

/**
 * Starts every node of a cluster at once (none answers before a quorum of controllers runs) and waits
 * until each answers; a node already running is left as it is.
 */
export async function startKafkaCluster(
  log: (line: string) => void,
  instances: readonly KafkaInstance[],
): Promise<void> {
  await Promise.all(instances.map((instance) => startKafka(log, instance)));
}

/** Stops the instance's broker (SIGTERM, then SIGKILL after the grace); its data stays for a restart. */
export async function stopKafka(instance: KafkaInstance, graceMs = 15_000): Promise<boolean> {
  return stopService(kafkaService(instance), graceMs);
}

/** Stops a private instance and deletes its folder (never the stack's own broker). */
export async function removeKafkaInstance(instance: KafkaInstance): Promise<void> {
  if (instance.name === 'kafka') throw new Error("the stack's own Kafka is not removed this way");
  await stopKafka(instance, 5000);
  rmSync(instance.dir, { recursive: true, force: true });
}

export { kafkaService };
