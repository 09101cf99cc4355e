import { spawnSync } from 'node:child_process';

/** Where the integration tests find Kafka, the registry and a Postgres server they may create databases on. */
export interface TestEndpoints {
  kafkaBrokers: string;
  registryUrl: string;
  /** A server URL with rights to create and drop databases. */
  postgresServerUrl: string;
  source: 'environment' | 'native stack' | 'testcontainers';
  stop?: () => Promise<void>;
}

function hasCommand(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

/**
 * Environment first (KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL), else the native stack (started
 * if needed: needs Java and Maven), else testcontainers when a Docker engine answers. Otherwise fail,
 * naming what is missing: integration tests are never silently skipped.
 */
export async function resolveTestEndpoints(log: (line: string) => void): Promise<TestEndpoints> {
  const { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL } = process.env;
  if (KAFKA_BROKERS && SCHEMA_REGISTRY_URL && DATABASE_URL) {
    return {
      kafkaBrokers: KAFKA_BROKERS,
      registryUrl: SCHEMA_REGISTRY_URL,
      postgresServerUrl: DATABASE_URL,
      source: 'environment',
    };
  }
  const problems: string[] = [];
  const java = hasCommand('java', ['-version']);
  const maven = hasCommand('mvn', ['-v']);
  if (java && maven) {
    const { stackUp } = await import('../../scripts/stack/stack.ts');
    const e = await stackUp(log);
    return {
      kafkaBrokers: e.KAFKA_BROKERS,
      registryUrl: e.SCHEMA_REGISTRY_URL,
      postgresServerUrl: e.DATABASE_URL,
      source: 'native stack',
    };
  }
  problems.push(
    `native stack: ${[!java && 'java', !maven && 'mvn'].filter(Boolean).join(' and ')} not found`,
  );
  const { dockerAnswers, startContainers } = await import('./containers.ts');
  if (await dockerAnswers()) return startContainers(log);
  problems.push('testcontainers: no Docker engine answers');
  throw new Error(
    'integration tests need Kafka, a schema registry and Postgres, and none could be had:\n' +
      `  - environment: set KAFKA_BROKERS, SCHEMA_REGISTRY_URL and DATABASE_URL (missing: ${[
        !KAFKA_BROKERS && 'KAFKA_BROKERS',
        !SCHEMA_REGISTRY_URL && 'SCHEMA_REGISTRY_URL',
        !DATABASE_URL && 'DATABASE_URL',
      ]
        .filter(Boolean)
        .join(', ')})\n` +
      problems.map((p) => `  - ${p}`).join('\n') +
      '\nRun only the unit tests with: npm run test:unit',
  );
}
