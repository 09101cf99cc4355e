import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { outcomeUnknownAnswer, type Answer } from '../../gateway/answers.ts';
import { swapCreationFailedEvent } from '../../gateway/events.ts';
import { completeIdempotency, readIdempotencyByRequest, stuckRequests } from '../../gateway/idempotency.ts';
import { failureAnswer, outcomeFromOutbox, outcomeFromProjection } from '../../gateway/settle.ts';
import { SwapNotFoundError } from '../../partner/errors.ts';
import { ProviderClients } from '../../providers/clients.ts';
import { partnerTextProblem } from '../../swap/text.ts';
import type { SwapEventOf } from '../../events/types.ts';
import { appendOperatorEvent } from '../operator.ts';

/** `10m`, `30s`, `2h`, `1d` or plain milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new UsageError(`"${text}" is not a duration (e.g. 30s, 10m, 2h, 1d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms']!;
  return Number(m[1]) * unit;
}

export const requestsStuckCommand: Command = {
  words: ['requests', 'stuck'],
  usage: 'requests stuck [--older-than <duration, default 10m>] [--json]',
  summary:
    'swap requests whose Idempotency-Key has no outcome (a crash between the partner call and the record)',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, { values: ['older-than'], flags: ['json'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const olderThanMs = parseDuration(values['older-than'] ?? '10m');
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { max: 1 });
    try {
      const stuck = await stuckRequests(pool, olderThanMs);
      if (flags.json) {
        io.stdout(JSON.stringify(stuck, null, 2));
        return 0;
      }
      if (stuck.length === 0) io.stdout('no request without an outcome');
      for (const s of stuck)
        io.stdout(
          `${s.requestId}  provider ${s.providerId}  since ${s.createdAt.toISOString()}  key ${s.key}`,
        );
      return 0;
    } finally {
      await pool.end();
    }
  },
};

export const requestsResolveCommand: Command = {
  words: ['requests', 'resolve'],
  usage: 'requests resolve <requestId> --by <operator> [--swap-id <partner swapId>] [--reason <text>]',
  summary:
    "settle a request without an outcome: from what was recorded, through GET /status when the swapId is known, else as outcome unknown in the operator's name",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['by', 'swap-id', 'reason'] });
    if (positionals.length !== 1) throw new UsageError('name one requestId');
    const requestId = positionals[0]!;
    const by = values.by?.trim();
    if (!by) throw new UsageError('--by <operator> is required: a settlement names who made it');
    for (const [name, v] of [
      ['requestId', requestId],
      ['--by', by],
      ['--swap-id', values['swap-id']],
      ['--reason', values.reason],
    ] as const) {
      const problem = v === undefined ? undefined : partnerTextProblem(v);
      if (problem) throw new UsageError(`${name} ${problem}`);
    }
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const pool = createPool(config.DATABASE_URL, { max: 2, searchPath: config.PROJECTION_SCHEMA });
    try {
      const key = await readIdempotencyByRequest(pool, requestId);
      if (!key) throw new UsageError(`no Idempotency-Key holds request ${requestId}`);
      if (key.state === 'completed') {
        io.stdout(`request ${requestId} is already settled: HTTP ${key.responseStatus}`);
        return 0;
      }
      const recorded =
        (await outcomeFromOutbox(pool, requestId)) ?? (await outcomeFromProjection(pool, requestId));
      if (recorded) {
        await completeIdempotency(pool, key.key, requestId, recorded.status, recorded.body);
        io.stdout(
          `settled ${requestId} from its recorded outcome: HTTP ${recorded.status}${swapOf(recorded)}`,
        );
        return 0;
      }
      const common = { providerId: key.providerId, now: new Date() };
      const reason = values.reason ? ` (${values.reason})` : '';
      let answer: Answer;
      let event: SwapEventOf<'SwapCreationFailed'>;
      const swapId = values['swap-id'];
      if (swapId !== undefined) {
        const partner = await new ProviderClients(pool, { refreshMs: 60_000 }).get(key.providerId);
        if (!partner) throw new UsageError(`no provider ${key.providerId}`);
        try {
          const status = await partner.client.status(swapId);
          const detail = `swap ${swapId} exists at the partner (status ${status.status}) but its signed creation answer was lost, so it is not handed out`;
          event = swapCreationFailedEvent(common, requestId, {
            kind: 'outcome_unknown',
            httpStatus: null,
            errorKey: null,
            message: `resolved by ${by}: ${detail}${reason}`,
          });
          answer = outcomeUnknownAnswer(requestId, detail);
        } catch (e) {
          if (!(e instanceof SwapNotFoundError)) throw e;
          event = swapCreationFailedEvent(common, requestId, {
            kind: 'partner_error',
            httpStatus: 404,
            errorKey: null,
            message: `resolved by ${by}: the partner has no swap ${swapId}; nothing was created${reason}`,
          });
          answer = failureAnswer(event.payload);
        }
      } else {
        event = swapCreationFailedEvent(common, requestId, {
          kind: 'outcome_unknown',
          httpStatus: null,
          errorKey: null,
          message: `resolved by ${by}: outcome unknown${reason}`,
        });
        answer = outcomeUnknownAnswer(requestId, `recorded as unknown by ${by}`);
      }
      // The fact first (Kafka acknowledged), then the key's answer: a crash between them leaves it to resolve again.
      await appendOperatorEvent(config, { ...event, source: 'ops' });
      await completeIdempotency(pool, key.key, requestId, answer.status, { ...answer.body, resolvedBy: by });
      io.stdout(`settled ${requestId}: HTTP ${answer.status}; ${event.payload.message}`);
      return 0;
    } finally {
      await pool.end();
    }
  },
};

function swapOf(a: Answer): string {
  return typeof a.body.swapId === 'string' ? ` (swap ${a.body.swapId})` : '';
}
