import type { Command, CliIo } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { caseActedEvent } from '../../ops/operator-events.ts';
import {
  CHECK_NAME,
  checkCaseAction,
  formatCase,
  formatCaseLine,
  listCases,
  loadCase,
} from '../../ops/cases.ts';
import { CASE_AGE_BUCKETS, isCaseAgeBucket, type CaseAgeBucket } from '../../ledger/aging.ts';
import { resolveSwapRef } from '../../ops/swap-ref.ts';
import { CASE_STATES } from '../../cases/machine.ts';
import { formatSwapRef, parseSwapRef } from '../../swap/ref.ts';
import { partnerTextProblem } from '../../swap/text.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

export const caseListCommand: Command = {
  words: ['case', 'list'],
  usage:
    'case list [--state open,acknowledged,disputed,resolved] [--provider <id>] [--age 0-1d|1-7d|7-30d|30d+] [--check <name>] [--json]',
  summary: 'cases by state (default: every unresolved one), oldest first',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['state', 'provider', 'age', 'check'],
      flags: ['json'],
    });
    if (positionals.length > 0) throw new UsageError('case list takes no positional argument');
    if (values.age !== undefined && !isCaseAgeBucket(values.age))
      throw new UsageError(
        `--age "${values.age.slice(0, 20)}" is not an age bucket (${CASE_AGE_BUCKETS.map((b) => b.name).join(', ')})`,
      );
    if (values.check !== undefined && (values.check.length > 80 || !CHECK_NAME.test(values.check)))
      throw new UsageError(
        `--check "${values.check.slice(0, 40)}" is not a check name (e.g. amount.to_wallet)`,
      );
    const states = values.state?.split(',').map((s) => s.trim());
    for (const s of states ?? [])
      if (!(CASE_STATES as readonly string[]).includes(s))
        throw new UsageError(`--state "${s.slice(0, 40)}" is not a case state (${CASE_STATES.join(', ')})`);
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      const list = await listCases(pool, {
        ...(states ? { states } : {}),
        ...(values.provider ? { providerId: values.provider } : {}),
        ...(values.age ? { age: values.age as CaseAgeBucket } : {}),
        ...(values.check ? { check: values.check } : {}),
      });
      if (flags.json) io.stdout(JSON.stringify(list, null, 2));
      else if (list.length === 0) io.stdout('no cases');
      else for (const c of list) io.stdout(formatCaseLine(c));
      return 0;
    } finally {
      await pool.end();
    }
  },
};

export const caseShowCommand: Command = {
  words: ['case', 'show'],
  usage: 'case show <provider>/<swapId> [--json]',
  summary: "a swap's case and its whole history",
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, { values: ['provider'], flags: ['json'] });
    if (positionals.length !== 1) throw new UsageError('name one swap: <provider>/<swapId>');
    const given = values as Record<string, string | undefined>;
    if (given.tx !== undefined && given.outcome !== 'partner_paid')
      throw new UsageError('--tx goes with --outcome partner_paid');
    if (given.tx !== undefined && given.reference !== undefined)
      throw new UsageError('--tx is the reference: give one of --tx, --reference');
    const parsed = await asUsage(async () => parseSwapRef(positionals[0]!, values.provider));
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      const ref = await asUsage(() => resolveSwapRef(pool, parsed));
      const c = await loadCase(pool, ref);
      if (!c) {
        io.stderr(`no case for ${formatSwapRef(ref)}`);
        return 1;
      }
      io.stdout(flags.json ? JSON.stringify(c, null, 2) : formatCase(c));
      return 0;
    } finally {
      await pool.end();
    }
  },
};

/** The flags each action takes besides --reason and --by. */
const ACTION_FLAGS = {
  acknowledge: [],
  dispute: ['sent'],
  resolve: ['outcome', 'reference', 'setting', 'tx'],
  propose_write_off: ['amount', 'currency'],
  approve_write_off: [],
} as const;

/** Checks the action against the case as it stands, then appends it: a refusal appends nothing (exit 2). */
async function act(action: keyof typeof ACTION_FLAGS, args: string[], io: CliIo): Promise<number> {
  const own = ACTION_FLAGS[action];
  const { values, positionals } = parseOptions(args, { values: [...own, 'reason', 'by', 'provider'] });
  if (positionals.length !== 1) throw new UsageError('name one swap: <provider>/<swapId>');
  for (const [name, v] of Object.entries(values)) {
    const problem = v === undefined ? undefined : partnerTextProblem(v, 2000);
    if (problem) throw new UsageError(`--${name} ${problem}`);
  }
  const given = values as Record<string, string | undefined>;
  if (given.tx !== undefined && given.outcome !== 'partner_paid')
    throw new UsageError('--tx goes with --outcome partner_paid');
  if (given.tx !== undefined && given.reference !== undefined)
    throw new UsageError('--tx is the reference: give one of --tx, --reference');
  const parsed = await asUsage(async () => parseSwapRef(positionals[0]!, values.provider));
  const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
  const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
  let event;
  let after;
  try {
    const ref = await asUsage(() => resolveSwapRef(pool, parsed));
    const v = values as Record<string, string | undefined>;
    // --tx: the partner's payment by its transaction, verified on the chain before anything is appended.
    let verified: string | undefined;
    if (v.tx !== undefined) {
      if (!config.CHAIN_SOURCES_FILE)
        throw new UsageError('--tx needs CHAIN_SOURCES_FILE (the chain sources the watcher reads)');
      // The chain clients (viem, bitcoinjs-lib) load for --tx only.
      const { loadChainSources } = await import('../../chain/index.ts');
      const { verifyCasePayment } = await import('../../ops/chain-payment.ts');
      const sources = await asUsage(() => loadChainSources(config.CHAIN_SOURCES_FILE!));
      const paid = await asUsage(() => verifyCasePayment(pool, { sources }, ref, v.tx!));
      v.reference = paid.reference;
      verified = paid.verified;
    }
    event = await asUsage(() =>
      caseActedEvent({
        ...ref,
        action,
        by: v.by,
        reason: v.reason,
        outcome: v.outcome,
        sent: v.sent,
        reference: v.reference,
        setting: v.setting,
        amount: v.amount,
        currency: v.currency,
        verified,
      }),
    );
    after = await asUsage(() => checkCaseAction(pool, ref, event!));
  } finally {
    await pool.end();
  }
  await appendOperatorEvent(config, event);
  io.stdout(
    `${action} appended as event ${event.eventId}: the case becomes ${after.state}${after.outcome ? ` (${after.outcome})` : ''}; see swap-ledger case show ${event.providerId}/${event.swapId}`,
  );
  return 0;
}

const actionCommand = (
  word: string,
  action: keyof typeof ACTION_FLAGS,
  flags: string,
  summary: string,
): Command => ({
  words: ['case', word],
  usage: `case ${word} <provider>/<swapId> ${flags}--reason <text> --by <operator>`.replace(/\s+/g, ' '),
  summary,
  run: (args, io) => act(action, args, io),
});

export const caseAckCommand = actionCommand('ack', 'acknowledge', '', 'acknowledge an open case');
export const caseDisputeCommand = actionCommand(
  'dispute',
  'dispute',
  '--sent <what was sent, e.g. sha256:<pack digest>> ',
  'record that the partner was asked, and what was sent',
);
export const caseResolveCommand = actionCommand(
  'resolve',
  'resolve',
  '--outcome partner_paid --tx <txid verified on chain> | --outcome partner_paid --reference <ref> | --outcome corrected [--reference <SwapCorrected id>] | --outcome false_alarm --setting <rule or setting> ',
  'resolve a case: the partner paid the difference, a correction, or a false alarm',
);
export const caseProposeWriteOffCommand = actionCommand(
  'propose-write-off',
  'propose_write_off',
  '--amount <a> --currency <platform id> ',
  'propose writing off a loss (another operator approves it)',
);
export const caseApproveWriteOffCommand = actionCommand(
  'approve-write-off',
  'approve_write_off',
  '',
  "approve another operator's write-off: the case resolves as an accepted loss, posted to write_offs",
);
