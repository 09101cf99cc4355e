import pg from 'pg';
import { postgresHealth } from '../../src/ops/health.ts';

export const APP_DATABASE = 'swap_ledger';
export const REGISTRY_DATABASE = 'swap_ledger_registry';
const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface PostgresTarget {
  /** Where the application's tables live. */
  appUrl: string;
  /** A URL on the same server with rights to create databases (for the registry's and tests' own). */
  serverUrl: string;
  source: 'DATABASE_URL' | 'local server';
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function postgresAnswers(url: string): Promise<boolean> {
  return (await postgresHealth(url, 2000)).healthy;
}

/** DATABASE_URL if set; else the server at 127.0.0.1:5432 if it answers; else a clear way to get one. */
export async function resolvePostgres(): Promise<PostgresTarget> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    if (!(await postgresAnswers(fromEnv))) {
      throw new Error('DATABASE_URL is set but its Postgres does not answer; check the server and the URL');
    }
    return { appUrl: fromEnv, serverUrl: fromEnv, source: 'DATABASE_URL' };
  }
  if (await postgresAnswers(LOCAL_SERVER)) {
    await ensureDatabase(LOCAL_SERVER, APP_DATABASE);
    return {
      appUrl: withDatabase(LOCAL_SERVER, APP_DATABASE),
      serverUrl: LOCAL_SERVER,
      source: 'local server',
    };
  }
  throw new Error(
    'no Postgres: DATABASE_URL is not set and nothing answers at 127.0.0.1:5432 (user postgres). ' +
      'Start one (Debian: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start; ' +
      'Docker: docker compose up -d postgres) or set DATABASE_URL.',
  );
}

export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name "${database}"`);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database ${database}`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created concurrently: fine
      });
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name "${database}"`);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${database} with (force)`);
  } finally {
    await client.end();
  }
}
