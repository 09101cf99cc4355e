import type pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as projection from './schema/projection.ts';

// Apart from client.ts: a pool does not need drizzle (its 100-odd modules), only the projection's tables do.
export type ProjectionDb = NodePgDatabase<typeof projection>;

export function projectionDb(pool: pg.Pool): ProjectionDb {
  return drizzle(pool, { schema: projection, casing: 'snake_case' });
}

export { projection };
