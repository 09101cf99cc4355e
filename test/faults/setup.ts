import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { dropDatabase, ensureDatabase, withDatabase } from '../../scripts/stack/postgres.ts';
import { stackDown, stackStatus, stackUp } from '../../scripts/stack/stack.ts';
import { CLUSTER_BROKERS, useClusterStack } from './cluster.ts';
import '../support/global-setup.ts'; // the `stack` the tests inject (its type)

/**
 * Starts the three-broker stack (`stack:up --brokers 3`: .stack/cluster3, Kafka 29092/29094/29096, registry
 * 28081) unless it runs already, gives the run a database of its own, and stops the stack afterwards if it
 * started it (FAULTS_KEEP_STACK=1 keeps it).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  useClusterStack();
  const log = (line: string) => console.log(`[faults] ${line}`);
  const wasUp = (await stackStatus().catch(() => [])).filter((c) => c.healthy).length;
  const endpoints = await stackUp(log, { brokers: CLUSTER_BROKERS });
  const server = withDatabase(endpoints.DATABASE_URL, 'postgres');
  const runId = `f${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `swap_ledger_${runId}`;
  await ensureDatabase(server, database);
  project.provide('stack', {
    kafkaBrokers: endpoints.KAFKA_BROKERS,
    registryUrl: endpoints.SCHEMA_REGISTRY_URL,
    databaseUrl: withDatabase(server, database),
    runId,
    source: 'native stack',
  });
  log(`cluster ${endpoints.KAFKA_BROKERS}, registry ${endpoints.SCHEMA_REGISTRY_URL}, database ${database}`);
  return async () => {
    await dropDatabase(server, database).catch((e: Error) => log(`drop ${database}: ${e.message}`));
    if (process.env.FAULTS_KEEP_STACK === '1' || wasUp === CLUSTER_BROKERS + 2) return;
    await stackDown(log);
  };
}
