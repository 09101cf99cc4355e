import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { assertIdentifier, createPool, projectionDb } from './client.ts';

const projectionMigrations = fileURLToPath(new URL('../../drizzle/projection', import.meta.url));

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
