import type { Command } from '../command.ts';
import { parseOptions } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { migratePlatform, migrateProjection, PLATFORM_SCHEMA } from '../../db/migrate.ts';

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
    return 0;
  },
};
