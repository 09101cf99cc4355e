import type { Command } from '../command.ts';
import { parseOptions } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { migratePlatform, migrateProjection, PLATFORM_SCHEMA } from '../../db/migrate.ts';
import { FINANCE_SCHEMA, migrateFinanceViews } from '../../ledger/finance-views.ts';

export const dbMigrateCommand: Command = {
  words: ['db', 'migrate'],
  usage: 'db migrate [--schema <name>]',
  summary:
    'apply the committed migrations to the platform schema and the live projection schema (or the one named)',
  async run(args, io) {
    const { values } = parseOptions(args, { values: ['schema'] });
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const schema = values.schema ?? config.PROJECTION_SCHEMA;
    await migratePlatform(config.DATABASE_URL);
    io.stdout(`migrations applied to schema ${PLATFORM_SCHEMA}`);
    await migrateProjection(config.DATABASE_URL, schema);
    io.stdout(`migrations applied to schema ${schema}`);
    // The finance views read the live projection only: migrating another schema leaves them where they are.
    if (schema === config.PROJECTION_SCHEMA) {
      await migrateFinanceViews(config.DATABASE_URL, schema);
      io.stdout(`finance views in schema ${FINANCE_SCHEMA} read schema ${schema}`);
    }
    return 0;
  },
};
