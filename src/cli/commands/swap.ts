import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { correctionEvent } from '../../ops/operator-events.ts';
import { formatTimeline, swapTimeline } from '../../ops/timeline.ts';
import { formatSwapRef, parseSwapRef, SwapRefError } from '../../swap/ref.ts';
import { resolveSwapRef } from '../../ops/swap-ref.ts';
import { finalityProblem, INTERNAL_STATUSES, isInternalStatus } from '../../swap/status.ts';
import { isDecimalText } from '../../money/decimal.ts';
import { partnerTextProblem } from '../../swap/text.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

const CORRECTION_AMOUNTS = ['amount', 'provider-fee', 'referral-fee', 'payout-network-fee'] as const;

/**
 * The operator's input bounds of `swap correct`, checked before anything is read or appended: a status is
 * one of the internal statuses (a partner's word or a typo would become a swap's status) whose class agrees
 * with --final (src/swap/status.ts, finalityProblem), amounts within
 * the input bounds, texts printable.
 */
export function correctionFlagsProblem(
  values: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (values.status !== undefined && !isInternalStatus(values.status))
    return `--status "${values.status.slice(0, 40)}" is not an internal status (${INTERNAL_STATUSES.join(', ')})`;
  if (values.status !== undefined && (values.final === 'true' || values.final === 'false')) {
    const contradiction = finalityProblem(values.status, values.final === 'true');
    if (contradiction) return `--status ${values.status} --final ${values.final}: ${contradiction}`;
  }
  for (const name of CORRECTION_AMOUNTS) {
    const v = values[name];
    if (v !== undefined && (!isDecimalText(v) || v.startsWith('-')))
      return `--${name} must be a non-negative decimal amount of at most 40 integer and 36 fraction digits`;
  }
  for (const name of ['reason', 'by'] as const) {
    const v = values[name];
    const problem = v === undefined ? undefined : partnerTextProblem(v, 2000);
    if (problem) return `--${name} ${problem}`;
  }
  return undefined;
}

export const swapShowCommand: Command = {
  words: ['swap', 'show'],
  usage: 'swap show <provider>/<swapId> | <swapId> [--provider <id>] [--json]',
  summary: "a swap's state and its whole timeline from the journal (applied, rejected, no-op, parked)",
  async run(args, io) {
    const { flags, values, positionals } = parseOptions(args, { values: ['provider'], flags: ['json'] });
    if (positionals.length !== 1) throw new UsageError('name one swap: <provider>/<swapId>');
    const parsed = await asUsage(async () => parseSwapRef(positionals[0]!, values.provider));
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      let ref;
      try {
        ref = await resolveSwapRef(pool, parsed);
      } catch (e) {
        if (!(e instanceof SwapRefError)) throw e;
        io.stderr(e.message);
        return 1;
      }
      const t = await swapTimeline(pool, ref);
      const name = formatSwapRef(ref);
      if (!t.swap && t.timeline.length === 0) {
        io.stderr(`no swap ${name} in ${config.PROJECTION_SCHEMA}`);
        return 1;
      }
      io.stdout(flags.json ? JSON.stringify({ ...ref, ...t }, null, 2) : formatTimeline(name, t));
      return 0;
    } finally {
      await pool.end();
    }
  },
};

export const swapCorrectCommand: Command = {
  words: ['swap', 'correct'],
  usage:
    'swap correct <provider>/<swapId> [--status <S> --final true|false] [--amount <a>] [--provider-fee <f>] [--referral-fee <f>] [--payout-network-fee <f>] --reason <text> --by <operator>',
  summary: 'append an audited SwapCorrected: the only way to amend a final swap',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      values: [
        'status',
        'final',
        'amount',
        'provider-fee',
        'referral-fee',
        'payout-network-fee',
        'reason',
        'by',
        'provider',
      ],
    });
    if (positionals.length !== 1) throw new UsageError('name one swap: <provider>/<swapId>');
    const parsed = await asUsage(async () => parseSwapRef(positionals[0]!, values.provider));
    const problem = correctionFlagsProblem(values);
    if (problem) throw new UsageError(problem);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let providerId: string;
    let swapId: string;
    try {
      ({ providerId, swapId } = await asUsage(() => resolveSwapRef(pool, parsed)));
    } finally {
      await pool.end();
    }
    const event = await asUsage(() =>
      correctionEvent({
        swapId,
        providerId,
        by: values.by,
        reason: values.reason,
        ...(values.status !== undefined ? { status: values.status } : {}),
        ...(values.final !== undefined ? { final: values.final } : {}),
        ...(values.amount !== undefined ? { amount: values.amount } : {}),
        ...(values['provider-fee'] !== undefined ? { providerFees: values['provider-fee'] } : {}),
        ...(values['referral-fee'] !== undefined ? { referralFees: values['referral-fee'] } : {}),
        ...(values['payout-network-fee'] !== undefined
          ? { payoutNetworkFees: values['payout-network-fee'] }
          : {}),
      }),
    );
    await appendOperatorEvent(config, event);
    io.stdout(`correction appended as event ${event.eventId}; see swap-ledger swap show ${swapId}`);
    return 0;
  },
};
