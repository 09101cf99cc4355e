import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { correctionEvent } from '../../ops/operator-events.ts';
import { formatTimeline, swapTimeline } from '../../ops/timeline.ts';
import { formatSwapRef, parseSwapRef, resolveSwapRef, SwapRefError } from '../../swap/ref.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

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
