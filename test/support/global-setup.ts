import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { dropDatabase, ensureDatabase, withDatabase } from '../../scripts/stack/postgres.ts';
import { resolveTestEndpoints } from './endpoints.ts';
import { createKafka } from '../../src/events/kafka.ts';

export interface TestStack {
  kafkaBrokers: string;
  registryUrl: string;
  /** This run's own database, created here and dropped after the run. */
  databaseUrl: string;
  /** Prefix of every topic and registry subject this run creates, so runs never meet. */
  runId: string;
  source: 'environment' | 'native stack' | 'testcontainers';
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: TestStack;
  }
}

/** Topics and registry subjects of this run go with it, so repeated runs do not pile up. */
async function removeRunArtifacts(brokers: string, registryUrl: string, runId: string): Promise<void> {
  const admin = createKafka({ brokers: brokers.split(','), clientId: 'swap-ledger-test-teardown' }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(runId));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
  const subjects = (await (await fetch(`${registryUrl}/subjects`)).json()) as string[];
  for (const subject of subjects.filter((s) => s.startsWith(runId))) {
    await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}`, { method: 'DELETE' });
    await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}?permanent=true`, {
      method: 'DELETE',
    });
  }
}

async function databasesNamed(serverUrl: string, prefix: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const r = await client.query<{ datname: string }>(
      `select datname from pg_database where starts_with(datname, $1)`,
      [prefix],
    );
    return r.rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

/** The one global setup of the integration tests: real services, an isolated database and prefix per run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const endpoints = await resolveTestEndpoints((line) => console.log(`[stack] ${line}`));
  const runId = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `swap_ledger_${runId}`;
  await ensureDatabase(endpoints.postgresServerUrl, database);
  console.log(
    `[stack] ${endpoints.source}: Kafka ${endpoints.kafkaBrokers}, registry ${endpoints.registryUrl}, database ${database}`,
  );
  project.provide('stack', {
    kafkaBrokers: endpoints.kafkaBrokers,
    registryUrl: endpoints.registryUrl,
    databaseUrl: withDatabase(endpoints.postgresServerUrl, database),
    runId,
    source: endpoints.source,
  });
  return async () => {
    await removeRunArtifacts(endpoints.kafkaBrokers, endpoints.registryUrl, runId);
    await dropDatabase(endpoints.postgresServerUrl, database);
    // The databases of the run's `up` processes (test/console/up-process.ts), named after the run.
    for (const own of await databasesNamed(endpoints.postgresServerUrl, runId))
      await dropDatabase(endpoints.postgresServerUrl, own);
    await endpoints.stop?.();
  };
}
