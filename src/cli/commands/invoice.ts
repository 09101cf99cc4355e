import { writeFileSync } from 'node:fs';
import type { Command } from '../command.ts';
import { financeSchemaOption, parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { invoiceByNumber, invoiceIssueEvent } from '../../ops/invoices.ts';
import { invoiceSettleEvent } from '../../ops/invoice-settle.ts';
import { invoiceCsv, invoiceHtml } from '../../monthend/invoice-render.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';
import { PROVIDER_ID } from '../../providers/file.ts';

const NEEDS = ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL'] as const;

export const invoiceIssueCommand: Command = {
  words: ['invoice', 'issue'],
  usage:
    'invoice issue <provider> <YYYY-MM> --by <operator> [--due-days 30] [--reissue --reason <text>] [--finance-schema <name>]',
  summary:
    "issue a partner's referral invoice of a month from the finance views (lines in dispute listed apart), appended as an InvoiceIssued; a second one needs --reissue --reason and supersedes the first",
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['by', 'due-days', 'reason', 'finance-schema'],
      flags: ['reissue'],
    });
    if (positionals.length !== 2)
      throw new UsageError('name the provider and the month: <provider> <YYYY-MM>');
    const [providerId, period] = positionals as [string, string];
    if (!PROVIDER_ID.test(providerId))
      throw new UsageError(`"${providerId.slice(0, 40)}" is not a provider id`);
    const dueDays = values['due-days'] === undefined ? 30 : Number(values['due-days']);
    const finance = financeSchemaOption(values['finance-schema']);
    const config = loadConfig(process.env, [...NEEDS]);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let event;
    try {
      event = await asUsage(() =>
        invoiceIssueEvent(pool, {
          providerId,
          period,
          by: values.by,
          dueDays,
          reissue: flags.reissue === true,
          reason: values.reason,
          finance,
        }),
      );
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, event);
    const p = event.payload;
    const totals = p.totals.map((t) => `${t.amount} ${t.currency}`).join(', ') || 'nothing';
    const disputed = p.lines.filter((l) => l.disputed !== null).length;
    io.stdout(
      `invoice ${p.invoiceNumber} of ${providerId} ${period} appended: ${totals}, due ${p.dueDate}; ${disputed} line(s) in dispute${p.supersedes ? `; supersedes ${p.supersedes}` : ''}`,
    );
    return 0;
  },
};

export const invoiceShowCommand: Command = {
  words: ['invoice', 'show'],
  usage: 'invoice show <number> [--format csv|html|json] [--out <file>]',
  summary: 'an issued referral invoice as CSV (the default), a printable HTML page or JSON',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['format', 'out'] });
    if (positionals.length !== 1) throw new UsageError('name one invoice number');
    const format = values.format ?? 'csv';
    if (!['csv', 'html', 'json'].includes(format)) throw new UsageError('--format must be csv, html or json');
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let invoice;
    try {
      invoice = await invoiceByNumber(pool, positionals[0]!);
    } finally {
      await pool.end();
    }
    if (!invoice) throw new UsageError(`no invoice ${positionals[0]!.slice(0, 80)}`);
    const text =
      format === 'html'
        ? invoiceHtml(invoice)
        : format === 'json'
          ? JSON.stringify(invoice, null, 2) + '\n'
          : invoiceCsv(invoice);
    if (values.out === undefined) io.stdout(text.replace(/\r?\n$/, ''));
    else writeFileSync(values.out, text);
    return 0;
  },
};

export const invoiceSettleCommand: Command = {
  words: ['invoice', 'settle'],
  usage:
    'invoice settle <number> --amount <x> --currency <C> (--bank-reference <ref> | --tx <txid>) --by <operator>',
  summary:
    "record a partner's payment of an invoice, a bank transfer or a transaction verified on the chain (to REFERRAL_ADDRESSES' address for the currency, at least the amount, confirmed): split across its lines in line order against referral_fees_receivable, appended as an InvoiceSettled (an overpayment or a currency not on the invoice is refused)",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      values: ['amount', 'currency', 'bank-reference', 'tx', 'by'],
    });
    if (positionals.length !== 1) throw new UsageError('name one invoice number');
    const tx = values.tx;
    if (tx !== undefined && values['bank-reference'] !== undefined)
      throw new UsageError('give one of --bank-reference, --tx');
    const config = loadConfig(process.env, [...NEEDS]);
    let verified: string | undefined;
    if (tx !== undefined) {
      if (!config.CHAIN_SOURCES_FILE)
        throw new UsageError('--tx needs CHAIN_SOURCES_FILE (the chain sources the watcher reads)');
      const to = values.currency ? config.REFERRAL_ADDRESSES[values.currency] : undefined;
      if (!to)
        throw new UsageError(
          `--tx needs the platform's referral address for ${values.currency ?? 'the --currency'} in REFERRAL_ADDRESSES`,
        );
      // The chain clients (viem, bitcoinjs-lib) load for --tx only.
      const { loadChainSources } = await import('../../chain/index.ts');
      const { verifyPaymentTo } = await import('../../ops/chain-payment.ts');
      const sources = await asUsage(() => loadChainSources(config.CHAIN_SOURCES_FILE));
      verified = await asUsage(() => verifyPaymentTo({ sources }, values.currency!, tx, to, values.amount));
    }
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let event;
    try {
      event = await asUsage(() =>
        invoiceSettleEvent(pool, {
          invoiceNumber: positionals[0]!,
          amount: values.amount,
          currency: values.currency,
          method: tx === undefined ? 'bank' : 'chain',
          reference: tx ?? values['bank-reference'],
          by: values.by,
          ...(verified ? { verified } : {}),
        }),
      );
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, event);
    const p = event.payload;
    io.stdout(
      `settlement of ${p.invoiceNumber} appended: ${p.amount} ${p.currency} over ${p.allocations.length} line(s)`,
    );
    return 0;
  },
};
