import type pg from 'pg';
import { createPool, type PoolOptions } from '../db/client.ts';
import { migratePlatform } from '../db/migrate.ts';
import { Teardown } from '../lifecycle/teardown.ts';
import type { Logger } from '../observability/log.ts';
import { loadProvidersFileIfSet } from './store.ts';

/**
 * How the webhook, the gateway and the poller start: the platform schema migrated, their pool (ended by
 * the returned teardown), and PROVIDERS_FILE loaded when set. On a failure the pool is ended, then thrown.
 */
export async function openProviderPool(
  config: { readonly DATABASE_URL: string; readonly PROVIDERS_FILE: string },
  poolOptions: PoolOptions,
  logger: Logger,
  env?: NodeJS.ProcessEnv,
): Promise<{ pool: pg.Pool; teardown: Teardown }> {
  await migratePlatform(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, poolOptions);
  const teardown = new Teardown();
  teardown.add(() => pool.end());
  try {
    await loadProvidersFileIfSet(pool, config.PROVIDERS_FILE, logger, env);
  } catch (e) {
    await teardown.run().catch(() => undefined);
    throw e;
  }
  return { pool, teardown };
}
