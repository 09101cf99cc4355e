import type pg from 'pg';
import { connectClient } from '../db/client.ts';
import { createKafka } from '../events/kafka.ts';
import type { ReadinessCheck } from '../observability/listener.ts';

export interface ComponentHealth {
  component: 'kafka' | 'schema-registry' | 'postgres';
  healthy: boolean;
  detail: string;
}

/** Healthy means a metadata request answers, not merely that the port is open. */
export async function kafkaHealth(brokers: string[], timeoutMs = 3000): Promise<ComponentHealth> {
  const admin = createKafka({
    brokers,
    clientId: 'swap-ledger-health',
    connectionTimeoutMs: timeoutMs,
    requestTimeoutMs: timeoutMs,
    retries: 0,
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return {
      component: 'kafka',
      healthy: true,
      detail: `${cluster.brokers.length} broker(s), cluster ${cluster.clusterId}`,
    };
  } catch (e) {
    return { component: 'kafka', healthy: false, detail: `${brokers.join(',')}: ${(e as Error).message}` };
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

export async function registryHealth(url: string, timeoutMs = 3000): Promise<ComponentHealth> {
  try {
    const res = await fetch(`${url}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200)
      return { component: 'schema-registry', healthy: false, detail: `${url}: HTTP ${res.status}` };
    const subjects = (await res.json()) as unknown[];
    return { component: 'schema-registry', healthy: true, detail: `${subjects.length} subject(s)` };
  } catch (e) {
    return { component: 'schema-registry', healthy: false, detail: `${url}: ${(e as Error).message}` };
  }
}

export async function postgresHealth(databaseUrl: string, timeoutMs = 3000): Promise<ComponentHealth> {
  let client: pg.Client | undefined;
  try {
    client = await connectClient(databaseUrl, { connectionTimeoutMillis: timeoutMs });
    const r = await client.query<{ version: string }>('select current_setting($1) as version', [
      'server_version',
    ]);
    return { component: 'postgres', healthy: true, detail: `PostgreSQL ${r.rows[0]?.version}` };
  } catch (e) {
    return { component: 'postgres', healthy: false, detail: (e as Error).message };
  } finally {
    await client?.end().catch(() => {});
  }
}

/** Kafka, the schema registry and Postgres answer: what every worker needs to do anything. */
export function dependencyChecks(config: {
  KAFKA_BROKERS: string[];
  SCHEMA_REGISTRY_URL: string;
  DATABASE_URL: string;
}): ReadinessCheck[] {
  const from = (h: { healthy: boolean; detail: string }) => ({ ok: h.healthy, detail: h.detail });
  return [
    { name: 'kafka', check: async () => from(await kafkaHealth(config.KAFKA_BROKERS, 2000)) },
    {
      name: 'schema-registry',
      check: async () => from(await registryHealth(config.SCHEMA_REGISTRY_URL, 2000)),
    },
    { name: 'postgres', check: async () => from(await postgresHealth(config.DATABASE_URL, 2000)) },
  ];
}
