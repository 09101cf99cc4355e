import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { ProvidersFileError, readProvidersFile } from '../../providers/file.ts';
import {
  certifyPartner,
  consoleLines,
  exitCodeOf,
  renderReport,
  reportFormatOf,
  targetFromDefinition,
  targetFromRegistry,
  type CertifyOptions,
  type CertifyTarget,
  type ReportFormat,
} from '../../certify/index.ts';

const USAGE =
  'partner certify --provider <id> [--file providers.yaml] [--base-url URL] [--pair from/to ...] ' +
  '[--report out.html|.json|.md ...] [--create-swaps] [--webhook [host:port]] [--webhook-wait S] ' +
  '[--final-wait S] [--time-limit S] [--min-quote-validity S] [--page-limit N] [--payout-address A] [--refund-address A]';

const SPEC = {
  provider: { type: 'string' },
  file: { type: 'string' },
  'base-url': { type: 'string' },
  pair: { type: 'string', multiple: true },
  report: { type: 'string', multiple: true },
  'create-swaps': { type: 'boolean' },
  webhook: { type: 'string' },
  'webhook-wait': { type: 'string' },
  'final-wait': { type: 'string' },
  'time-limit': { type: 'string' },
  'min-quote-validity': { type: 'string' },
  'page-limit': { type: 'string' },
  'payout-address': { type: 'string' },
  'refund-address': { type: 'string' },
} as const;

/** `--webhook` alone listens on loopback, any free port (printed). */
const DEFAULT_WEBHOOK = '127.0.0.1:0';

function seconds(name: string, v: string | undefined, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(v) || Number(v) > max)
    throw new UsageError(`--${name} must be a number of seconds from 0 to ${max}`);
  return Math.round(Number(v) * 1000);
}

function hostPort(v: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(v) ?? /^()()(\d{1,5})$/.exec(v);
  const port = m ? Number.parseInt(m[3]!, 10) : NaN;
  if (!m || port > 65_535)
    throw new UsageError('--webhook takes host:port (default 127.0.0.1:0, any free port)');
  return { host: m[1] || m[2] || '127.0.0.1', port };
}

/** Parses the command line; exported for tests. */
export function certifyArgs(args: string[]): {
  provider: string;
  file: string | undefined;
  baseUrl: string | undefined;
  reports: { path: string; format: ReportFormat }[];
  options: CertifyOptions;
} {
  // --webhook takes an optional address: a bare one gets the loopback default.
  const normalised = args.flatMap((a, i) =>
    a === '--webhook' && (args[i + 1] === undefined || args[i + 1]!.startsWith('--'))
      ? [`--webhook=${DEFAULT_WEBHOOK}`]
      : [a],
  );
  let parsed;
  try {
    parsed = parseArgs({ args: normalised, options: SPEC, strict: true, allowPositionals: false });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
  const v = parsed.values;
  if (!v.provider) throw new UsageError('--provider is required');
  if (v['base-url'] !== undefined) {
    let u: URL;
    try {
      u = new URL(v['base-url']);
    } catch {
      throw new UsageError('--base-url must be a URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new UsageError('--base-url must be http or https');
  }
  const pairs = (v.pair ?? []).map((p) => {
    const m = /^([^/\s]+)\/([^/\s]+)$/.exec(p);
    if (!m) throw new UsageError(`--pair takes from/to partner currency ids, got "${p}"`);
    return { from: m[1]!, to: m[2]! };
  });
  const reports = (v.report ?? []).map((path) => {
    const format = reportFormatOf(path);
    if (!format) throw new UsageError(`--report ${path}: name a .html, .json or .md file`);
    return { path, format };
  });
  let pageLimit: number | undefined;
  if (v['page-limit'] !== undefined) {
    if (!/^\d{1,9}$/.test(v['page-limit']) || Number(v['page-limit']) < 1)
      throw new UsageError('--page-limit must be a whole number from 1');
    pageLimit = Number.parseInt(v['page-limit'], 10);
  }
  const timeLimitMs = seconds('time-limit', v['time-limit'], 600);
  if (timeLimitMs === 0) throw new UsageError('--time-limit must be above 0');
  const webhookWaitMs = seconds('webhook-wait', v['webhook-wait'], 3600);
  const finalWaitMs = seconds('final-wait', v['final-wait'], 3600);
  const minQuoteValidityMs = seconds('min-quote-validity', v['min-quote-validity'], 86_400);
  return {
    provider: v.provider,
    file: v.file,
    baseUrl: v['base-url'],
    reports,
    options: {
      createSwaps: v['create-swaps'] ?? false,
      ...(pairs.length ? { pairs } : {}),
      ...(v.webhook !== undefined ? { webhook: hostPort(v.webhook) } : {}),
      ...(webhookWaitMs !== undefined ? { webhookWaitMs } : {}),
      ...(finalWaitMs !== undefined ? { finalWaitMs } : {}),
      ...(timeLimitMs !== undefined ? { timeLimitMs } : {}),
      ...(minQuoteValidityMs !== undefined ? { minQuoteValidityMs } : {}),
      ...(pageLimit !== undefined ? { pageLimit } : {}),
      ...(v['payout-address'] ? { payoutAddress: v['payout-address'] } : {}),
      ...(v['refund-address'] ? { refundAddress: v['refund-address'] } : {}),
    },
  };
}

/** The registry entry: from --file when given, else from the registry in Postgres (DATABASE_URL). */
async function loadTarget(provider: string, file: string | undefined): Promise<CertifyTarget> {
  if (file !== undefined) {
    const def = readProvidersFile(file).find((d) => d.id === provider);
    if (!def) throw new UsageError(`${file} has no provider ${provider}`);
    return targetFromDefinition(def);
  }
  const config = loadConfig(process.env, ['DATABASE_URL']);
  const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'swap-ledger-certify' });
  try {
    const target = await targetFromRegistry(pool, provider);
    if (!target)
      throw new UsageError(`no provider ${provider} in the registry (load it, or name the file with --file)`);
    return target;
  } finally {
    await pool.end();
  }
}

export const partnerCertifyCommand: Command = {
  words: ['partner', 'certify'],
  usage: USAGE,
  summary:
    "check a partner's sandbox against interface v2 with its registry entry; one line per requirement, exit 1 on any FAIL",
  async run(args, io) {
    const parsed = certifyArgs(args);
    let target: CertifyTarget;
    try {
      target = await loadTarget(parsed.provider, parsed.file);
    } catch (e) {
      if (!(e instanceof ProvidersFileError)) throw e;
      io.stderr(e.message);
      return 2;
    }
    if (parsed.baseUrl) target = { ...target, baseUrl: parsed.baseUrl.replace(/\/+$/, '') };
    io.stdout(
      `certifying ${target.providerId} at ${target.baseUrl}${parsed.options.createSwaps ? ' (creating sandbox swaps)' : ''}`,
    );
    const report = await certifyPartner(target, {
      ...parsed.options,
      onListening: (url) =>
        io.stdout(`webhook listener at ${url}: the partner pushes to ${url}/webhook/{swapId}/status`),
    });
    for (const line of consoleLines(report)) io.stdout(line);
    for (const r of parsed.reports) {
      writeFileSync(r.path, renderReport(report, r.format));
      io.stdout(`report written to ${r.path}`);
    }
    return exitCodeOf(report);
  },
};
