import type { FastifyInstance } from 'fastify';
import { ConsoleDb } from '../../src/console/db.ts';
import { buildConsoleServer } from '../../src/console/server.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';

/**
 * The console as a viewer reads it, over its own read-only login, on a projection schema: `page(path)` logs
 * in and answers the GET (app.inject, no port). Created on first use; `close()` in the file's afterAll.
 */
export function consoleViewer(databaseUrl: string, schema: string) {
  const viewer = generateApiKey();
  let db: ConsoleDb | undefined;
  let app: FastifyInstance | undefined;
  return {
    async page(path: string) {
      if (!db) {
        await migratePlatform(databaseUrl); // the reader's grants cover the platform schema
        db = await ConsoleDb.open(databaseUrl, schema, 'finance', createLogger({ level: 'silent' }));
      }
      app ??= await buildConsoleServer({
        db,
        keys: { viewer: [viewer.sha256] },
        logger: createLogger({ level: 'silent' }),
      });
      const login = await app.inject({
        method: 'POST',
        url: '/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `key=${viewer.key}`,
      });
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      return app.inject({ method: 'GET', url: path, headers: { cookie } });
    },
    async close() {
      await app?.close();
      await db?.close();
    },
  };
}
