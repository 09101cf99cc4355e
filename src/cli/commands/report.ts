import type { Command } from '../command.ts';
import { parseOptions, UsageError, financeSchemaOption } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { financeReport, formatReportCsv, formatReportTable, parseReportTime } from '../../ledger/report.ts';

export const reportCommand: Command = {
  words: ['report'],
  usage: 'report --from <time> --to <time> [--format table|csv] [--finance-schema <name>]',
  summary:
    'reconciliation summary and finance figures (referral revenue, volumes) of a period, from the finance views',
  async run(args, io) {
    const { values } = parseOptions(args, { values: ['from', 'to', 'format', 'finance-schema'] });
    if (!values.from || !values.to) throw new UsageError('--from and --to are required');
    const format = values.format ?? 'table';
    if (format !== 'table' && format !== 'csv') throw new UsageError('--format is table or csv');
    let from: string;
    let to: string;
    try {
      from = parseReportTime(values.from);
      to = parseReportTime(values.to);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    if (!(Date.parse(from) < Date.parse(to))) throw new UsageError(`--from ${from} is not before --to ${to}`);
    const finance = financeSchemaOption(values['finance-schema']);
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'swap-ledger-report' });
    try {
      const client = await pool.connect();
      try {
        // One snapshot: every section sees the same committed state.
        await client.query('begin isolation level repeatable read read only');
        const report = await financeReport(client, { from, to }, finance);
        await client.query('commit');
        for (const line of format === 'csv' ? formatReportCsv(report) : formatReportTable(report))
          io.stdout(line);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
    return 0;
  },
};
