import type { TestEndpoints } from './endpoints.ts';

/** True when testcontainers finds a Docker (or compatible) engine. */
export async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** The same three services as docker-compose.yml, on random host ports, for machines with Docker. */
export async function startContainers(log: (line: string) => void): Promise<TestEndpoints> {
  const { GenericContainer, Network, Wait } = await import('testcontainers');
  const network = await new Network().start();
  const postgres = await new GenericContainer('postgres:16')
    .withNetwork(network)
    .withNetworkAliases('postgres')
    .withEnvironment({ POSTGRES_PASSWORD: 'postgres', POSTGRES_DB: 'swap_ledger_registry' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const kafka = await new GenericContainer('apache/kafka:3.9.1')
    .withExposedPorts({ container: 19092, host: 19092 })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:19093',
      KAFKA_LISTENERS: 'PLAINTEXT://:19092,CONTROLLER://:19093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://127.0.0.1:19092',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  const registry = await new GenericContainer('apicurio/apicurio-registry:3.0.9')
    .withNetwork(network)
    .withEnvironment({
      APICURIO_STORAGE_KIND: 'sql',
      APICURIO_STORAGE_SQL_KIND: 'postgresql',
      APICURIO_DATASOURCE_URL: 'jdbc:postgresql://postgres:5432/swap_ledger_registry',
      APICURIO_DATASOURCE_USERNAME: 'postgres',
      APICURIO_DATASOURCE_PASSWORD: 'postgres',
    })
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .start();
  log('testcontainers: Kafka, Apicurio Registry and Postgres started');
  return {
    kafkaBrokers: `127.0.0.1:${kafka.getMappedPort(19092)}`,
    registryUrl: `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`,
    postgresServerUrl: `postgres://postgres:postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`,
    source: 'testcontainers',
    stop: async () => {
      await registry.stop();
      await kafka.stop();
      await postgres.stop();
      await network.stop();
    },
  };
}
