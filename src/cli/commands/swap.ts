import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { correctionEvent } from '../../ops/operator-events.ts';
import { formatTimeline, swapTimeline } from '../../ops/timeline.ts';
import { INTERNAL_STATUSES, isInternalStatus } from '../../ingest/status-mapping.ts';
import { isDecimalText } from '../../money/decimal.ts';
import { partnerTextProblem } from '../../swap/text.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

const CORRECTION_AMOUNTS = ['amount', 'provider-fee', 'referral-fee', 'payout-network-fee'] as const;

/**
 * The operator's input bounds of `swap correct`, checked before anything is read or appended: a status is
 * one of the internal statuses (a partner's word or a typo would become a swap's status), amounts within
 * the input bounds, texts printable.
 */
export function correctionFlagsProblem(
  values: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (values.status !== undefined && !isInternalStatus(values.status))
    return `--status "${values.status.slice(0, 40)}" is not an internal status (${INTERNAL_STATUSES.join(', ')})`;
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
  usage: 'swap show <swapId> [--json]',
  summary: "a swap's state and its whole timeline from the journal (applied, rejected, no-op, parked)",
  async run(args, io) {
    const { flags, positionals } = parseOptions(args, { values: [], flags: ['json'] });
    if (positionals.length !== 1) throw new UsageError('name one swap id');
    const swapId = positionals[0]!;
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      const t = await swapTimeline(pool, swapId);
      if (!t.swap && t.timeline.length === 0) {
        io.stderr(`no swap ${swapId} in ${config.PROJECTION_SCHEMA}`);
        return 1;
      }
      io.stdout(flags.json ? JSON.stringify({ swapId, ...t }, null, 2) : formatTimeline(swapId, t));
      return 0;
    } finally {
      await pool.end();
    }
  },
};

export const swapCorrectCommand: Command = {
  words: ['swap', 'correct'],
  usage:
    'swap correct <swapId> [--status <S> --final true|false] [--amount <a>] [--provider-fee <f>] [--referral-fee <f>] [--payout-network-fee <f>] --reason <text> --by <operator>',
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
      ],
    });
    if (positionals.length !== 1) throw new UsageError('name one swap id');
    const swapId = positionals[0]!;
    const problem = correctionFlagsProblem(values);
    if (problem) throw new UsageError(problem);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let providerId: string;
    try {
      const r = await pool.query<{ provider_id: string }>(
        'select provider_id from swaps where swap_id = $1',
        [swapId],
      );
      if (!r.rows[0]) throw new UsageError(`no swap ${swapId} in ${config.PROJECTION_SCHEMA}`);
      providerId = r.rows[0].provider_id;
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
