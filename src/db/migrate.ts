import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { assertIdentifier, connectClient, createPool } from './client.ts';
import { projectionDb } from './projection.ts';
import { PLATFORM_SCHEMA } from './platform-schema.ts';

const projectionMigrations = fileURLToPath(new URL('../../drizzle/projection', import.meta.url));
const platformMigrations = fileURLToPath(new URL('../../drizzle/platform', import.meta.url));

/**
 * Applies the committed projection migrations to `schema` (created if missing). The migration
 * bookkeeping lives in the same schema, so a replay's fresh schema is migrated exactly like the live one.
 */
export async function migrateProjection(databaseUrl: string, schema: string): Promise<void> {
  assertIdentifier(schema);
  const pool = createPool(databaseUrl, {
    searchPath: schema,
    max: 1,
    applicationName: 'swap-ledger-migrate',
  });
  try {
    await pool.query(`create schema if not exists ${schema}`);
    await migrate(projectionDb(pool), {
      migrationsFolder: projectionMigrations,
      migrationsSchema: schema,
      migrationsTable: '__drizzle_migrations',
    });
  } finally {
    await pool.end();
  }
}

// In its own module, so the readers of the platform tables do not load drizzle's migrator.
export { PLATFORM_SCHEMA };

/**
 * Applies the committed platform migrations (drizzle/platform) to schema `platform`, bookkeeping in
 * the same schema. Serialised by an advisory lock: several processes (webhook servers, tests) may start
 * at once against one database.
 */
export async function migratePlatform(databaseUrl: string): Promise<void> {
  const lock = await connectClient(databaseUrl, { application_name: 'swap-ledger-migrate' });
  try {
    await lock.query(`select pg_advisory_lock(hashtext('swap-ledger:migrate:platform'))`);
    const pool = createPool(databaseUrl, { max: 1, applicationName: 'swap-ledger-migrate' });
    try {
      await pool.query(`create schema if not exists ${PLATFORM_SCHEMA}`);
      await migrate(drizzle(pool), {
        migrationsFolder: platformMigrations,
        migrationsSchema: PLATFORM_SCHEMA,
        migrationsTable: '__drizzle_migrations',
      });
    } finally {
      await pool.end();
    }
  } finally {
    await lock.end(); // ends the session, which releases the lock
  }
}
