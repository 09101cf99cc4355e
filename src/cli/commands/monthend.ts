import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { readProvidersFile } from '../../providers/file.ts';
import { parseReconciliationPolicy } from '../../reconciler/policy.ts';
import { DEFAULT_STATEMENT_LAYOUT, StatementFileError } from '../../monthend/layout.ts';
import { statementImportEvent } from '../../ops/statements.ts';
import { periodCloseEvent, periodReopenEvent, verifyPeriods } from '../../ops/periods.ts';
import { awaitCatchUp } from '../../ops/catch-up.ts';
import { createKafka } from '../../events/kafka.ts';
import { createLogger } from '../../observability/log.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';
import { PROVIDER_ID } from '../../providers/file.ts';

const NEEDS = ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL'] as const;

export const statementImportCommand: Command = {
  words: ['statement', 'import'],
  usage: 'statement import <provider> <file.csv> --period <YYYY-MM> --by <operator> [--reason <text>]',
  summary:
    "import a partner's monthly statement: each line matched to the ledger on (provider, swapId), appended as a StatementImported (a re-import supersedes the one in force)",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['period', 'by', 'reason'] });
    if (positionals.length !== 2)
      throw new UsageError('name the provider and the file: <provider> <file.csv>');
    const [providerId, file] = positionals as [string, string];
    if (!PROVIDER_ID.test(providerId))
      throw new UsageError(`"${providerId.slice(0, 40)}" is not a provider id`);
    if (values.period === undefined) throw new UsageError('--period <YYYY-MM> is required');
    const config = loadConfig(process.env, [...NEEDS]);
    const fees = (await asUsage(() => parseReconciliationPolicy(config.RECONCILE ?? {}))).fees;
    const provider = config.PROVIDERS_FILE
      ? (await asUsage(() => readProvidersFile(config.PROVIDERS_FILE))).find((p) => p.id === providerId)
      : undefined;
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
    }
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let built;
    try {
      built = await asUsage(() =>
        statementImportEvent(pool, {
          providerId,
          period: values.period!,
          fileName: basename(file),
          bytes,
          layout: provider?.statementLayout ?? DEFAULT_STATEMENT_LAYOUT,
          layoutName: provider?.statementLayout ? 'provider' : 'default',
          mappings: provider
            ? { currencies: provider.currencies, mapStatus: (w) => provider.statusMapping.statuses.get(w) }
            : {},
          fees,
          by: values.by,
          reason: values.reason,
        }),
      );
    } catch (e) {
      if (!(e instanceof StatementFileError)) throw e;
      io.stderr(`${file}: ${e.message}`);
      return 2;
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, built.event);
    const counts = Object.entries(built.counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    io.stdout(
      `statement ${built.event.eventId} of ${providerId} ${values.period} appended (${counts})${built.event.payload.supersedes ? `; supersedes ${built.event.payload.supersedes}` : ''}`,
    );
    return 0;
  },
};

export const periodCloseCommand: Command = {
  words: ['period', 'close'],
  usage: 'period close <YYYY-MM> --by <operator> --reason <text> [--accept-differences] [--wait <seconds>]',
  summary:
    "close a month: seal its postings and statements with a digest chained to the previous close's (needs every statement reconciled, or --accept-differences; waits up to --wait s, 120 by default, for the projector to hold the whole log)",
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['by', 'reason', 'wait'],
      flags: ['accept-differences'],
    });
    if (positionals.length !== 1) throw new UsageError('name one period: YYYY-MM');
    const waitSeconds = values.wait === undefined ? 120 : Number(values.wait);
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > 3600)
      throw new UsageError('--wait must be whole seconds, 0-3600');
    const config = loadConfig(process.env, [...NEEDS]);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let event;
    try {
      // A seal over a projection that lags the log would miss the month's last facts.
      const admin = createKafka({
        brokers: config.KAFKA_BROKERS,
        clientId: `${config.KAFKA_CLIENT_ID}-period-close`,
        logger: createLogger({ level: 'warn', name: 'period-close' }),
      }).admin();
      await admin.connect();
      let behind;
      try {
        behind = await awaitCatchUp({
          admin,
          pool,
          topic: config.EVENTS_TOPIC,
          timeoutMs: waitSeconds * 1000,
          progress: (problem) => io.stderr(`waiting before sealing: ${problem}`),
        });
      } finally {
        await admin.disconnect();
      }
      if (behind)
        throw new UsageError(
          `not sealed: ${behind} after ${waitSeconds} s; a seal must hold the whole log (run the projector and the gateway's outbox relay, then close again)`,
        );
      event = await asUsage(() =>
        periodCloseEvent(pool, {
          period: positionals[0]!,
          by: values.by,
          reason: values.reason,
          acceptDifferences: flags['accept-differences'] ?? false,
        }),
      );
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, event);
    io.stdout(
      `${event.payload.period} closed: ${event.payload.postingCount} posting(s), digest ${event.payload.digest}`,
    );
    return 0;
  },
};

export const periodVerifyCommand: Command = {
  words: ['period', 'verify'],
  usage: 'period verify [--json]',
  summary: 'recompute the seal of every closed month and its chain: exit 1 when a closed month changed',
  async run(args, io) {
    const { flags } = parseOptions(args, { values: [], flags: ['json'] });
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      const result = await verifyPeriods(pool);
      const ok = result.chain.length === 0 && result.periods.every((p) => p.ok);
      if (flags.json) io.stdout(JSON.stringify({ ok, ...result }, null, 2));
      else {
        for (const p of result.periods)
          io.stdout(
            p.ok
              ? `${p.period} OK ${p.sealed}`
              : `${p.period} CHANGED: sealed ${p.sealed}, now ${p.recomputed} (postings sealed ${p.postingCount.sealed}, now ${p.postingCount.now})`,
          );
        for (const c of result.chain) io.stdout(`chain broken: ${c}`);
        if (result.periods.length === 0) io.stdout('no closed period');
      }
      return ok ? 0 : 1;
    } finally {
      await pool.end();
    }
  },
};

export const periodReopenCommand: Command = {
  words: ['period', 'reopen'],
  usage: 'period reopen <YYYY-MM> --force --by <operator> --reason <text>',
  summary: 'reopen a closed month (recorded; its seal no longer in force until it is closed again)',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, { values: ['by', 'reason'], flags: ['force'] });
    if (positionals.length !== 1) throw new UsageError('name one period: YYYY-MM');
    const config = loadConfig(process.env, [...NEEDS]);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let event;
    try {
      event = await asUsage(() =>
        periodReopenEvent(pool, {
          period: positionals[0]!,
          by: values.by,
          reason: values.reason,
          force: flags.force ?? false,
        }),
      );
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, event);
    io.stdout(`${event.payload.period} reopened by ${event.payload.operator}`);
    return 0;
  },
};
