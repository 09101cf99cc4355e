import { parseOptions, UsageError, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { migratePlatform } from '../../db/migrate.ts';
import { createLogger } from '../../observability/log.ts';
import { syncAllCatalogs } from '../../poller/run.ts';
import { ProviderClients } from '../../providers/clients.ts';

export const catalogSyncCommand: Command = {
  words: ['catalog', 'sync'],
  usage: 'catalog sync [--provider <id>]',
  summary:
    "read every page of each enabled provider's /currencies and /pairs into the catalog tables now (one JSON line per provider)",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['provider'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const logger = createLogger({
      level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
      name: 'catalog',
    });
    await migratePlatform(config.DATABASE_URL);
    const pool = createPool(config.DATABASE_URL, { max: 2, applicationName: 'swap-ledger-catalog' });
    try {
      const clients = new ProviderClients(pool, { refreshMs: 60_000 });
      if (values.provider !== undefined && !(await clients.get(values.provider)))
        throw new UsageError(`no provider ${values.provider}`);
      const reports = await syncAllCatalogs(
        pool,
        clients,
        logger,
        values.provider !== undefined ? [values.provider] : undefined,
      );
      for (const r of reports) io.stdout(JSON.stringify(r));
      if (reports.length === 0) io.stderr('no enabled provider');
      return reports.some((r) => r.outcome !== 'ok') ? 1 : 0;
    } finally {
      await pool.end();
    }
  },
};
