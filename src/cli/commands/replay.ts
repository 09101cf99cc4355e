import v8 from 'node:v8';
import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { EventCodec } from '../../events/codec.ts';
import { createKafka } from '../../events/kafka.ts';
import { createLogger } from '../../observability/log.ts';
import { partnerTextProblem } from '../../swap/text.ts';
import {
  dropProjectionSchema,
  listProjectionSchemas,
  parseToOffset,
  promote,
  replay,
  type PromoteForce,
  type ReplayProgress,
  type ReplayUntil,
} from '../../ops/replay.ts';

function progressLine(p: ReplayProgress): string {
  const width = 30;
  const ratio = p.total === 0 ? 1 : Math.min(1, p.done / p.total);
  const bar = '#'.repeat(Math.round(ratio * width)).padEnd(width, '-');
  const eta = p.remainingSeconds === undefined ? '?' : `${p.remainingSeconds}s`;
  return `[${bar}] ${(ratio * 100).toFixed(0).padStart(3)}%  ${p.done}/${p.total} events  ${p.eventsPerSecond} ev/s  ${eta} left`;
}

export const replayCommand: Command = {
  words: ['replay'],
  usage: 'replay [--to-offset <n|p:n,…>] [--to-time <ISO time>] [--promote] [--batch <events>]',
  summary:
    'rebuild every projected table from offset 0 into a fresh schema, compare checksums with the live state',
  async run(args, io) {
    const { values, flags } = parseOptions(args, {
      values: ['to-offset', 'to-time', 'batch'],
      flags: ['promote'],
    });
    if (values['to-offset'] && values['to-time'])
      throw new UsageError('give --to-offset or --to-time, not both');
    let until: ReplayUntil = { kind: 'end' };
    if (values['to-offset']) {
      try {
        until = parseToOffset(values['to-offset']);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
    }
    if (values['to-time']) {
      const time = new Date(values['to-time']);
      if (Number.isNaN(time.getTime()))
        throw new UsageError(`--to-time "${values['to-time']}" is not a time`);
      until = { kind: 'time', time };
    }
    if (flags.promote && until.kind !== 'end')
      throw new UsageError('--promote rebuilds to the end of the log only');
    const batch = values.batch === undefined ? undefined : Number(values.batch);
    if (batch !== undefined && !(Number.isInteger(batch) && batch > 0))
      throw new UsageError('--batch must be > 0');
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: 'warn', name: 'replay' });
    const tty = process.stderr.isTTY;
    const result = await replay({
      databaseUrl: config.DATABASE_URL,
      kafka: createKafka({
        brokers: config.KAFKA_BROKERS,
        clientId: `${config.KAFKA_CLIENT_ID}-replay`,
        logger,
      }),
      codec: new EventCodec(config.SCHEMA_REGISTRY_URL, config.EVENTS_TOPIC),
      topic: config.EVENTS_TOPIC,
      liveSchema: config.PROJECTION_SCHEMA,
      until,
      ...(batch ? { batchEvents: batch } : {}),
      logger,
      parallel: {
        workers: config.REPLAY_WORKERS,
        kafkaBrokers: config.KAFKA_BROKERS,
        schemaRegistryUrl: config.SCHEMA_REGISTRY_URL,
        clientId: `${config.KAFKA_CLIENT_ID}-replay`,
      },
      onProgress: (p) => (tty ? process.stderr.write(`\r${progressLine(p)}`) : io.stderr(progressLine(p))),
    });
    if (tty) process.stderr.write('\n');
    const { foldSeconds, finishSeconds, checksumSeconds } = result.phases;
    io.stdout(
      `rebuilt schema  ${result.schema}  (${result.events} events in ${result.seconds.toFixed(1)} s: ` +
        `fold ${foldSeconds.toFixed(1)} s, then side by side index builds ${finishSeconds.toFixed(1)} s ` +
        `and checksums ${checksumSeconds.toFixed(1)} s)`,
    );
    io.stdout(`rebuilt checksum ${result.rebuilt.checksum}`);
    io.stdout(`heap budget      ${Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20)} MiB`);
    io.stdout(
      `live checksum    ${result.live?.checksum ?? '(no live schema)'}  (${config.PROJECTION_SCHEMA})`,
    );
    io.stdout(
      result.equal
        ? 'EQUAL: the rebuilt state matches the live state'
        : 'DIFFERENT: the rebuilt state differs from the live state',
    );
    if (!result.equal && result.live) {
      for (const [table, t] of Object.entries(result.rebuilt.tables)) {
        const l = result.live.tables[table];
        if (l?.digest !== t.digest)
          io.stdout(`  ${table}: rebuilt ${t.rows} rows, live ${l?.rows ?? 0} rows`);
      }
    }
    if (flags.promote && result.live && !result.equal) {
      io.stderr(
        `not promoted: the rebuilt state differs from the live state. Inspect ${result.schema}; if it is the ` +
          `right state, promote it on purpose: swap-ledger replay promote ${result.schema} --force --reason <why> --by <operator>`,
      );
      return 1;
    }
    if (flags.promote) {
      const { previous } = await promote(config.DATABASE_URL, config.PROJECTION_SCHEMA, result.schema, {
        logger,
      });
      io.stdout(
        `promoted ${result.schema} to ${config.PROJECTION_SCHEMA}; the previous state is kept as ${previous}`,
      );
      io.stdout(`drop it when no longer needed: swap-ledger replay drop ${previous}`);
    }
    return 0;
  },
};

export const replayPromoteCommand: Command = {
  words: ['replay', 'promote'],
  usage: 'replay promote <schema> [--allow-partial] [--force --reason <why> --by <operator>]',
  summary:
    'make a rebuilt schema the live one, atomically; the previous live schema is kept (a partial rebuild only with --allow-partial; one whose check said DIFFERENT, or unchecked, only with --force, a reason and an operator, audited)',
  async run(args, io) {
    const { positionals, flags, values } = parseOptions(args, {
      values: ['reason', 'by'],
      flags: ['allow-partial', 'force'],
    });
    if (positionals.length !== 1) throw new UsageError('name one rebuilt schema');
    const force = promoteForce(flags.force === true, values);
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const logger = createLogger({ level: 'warn', name: 'replay-promote' });
    const { previous, forced } = await promote(
      config.DATABASE_URL,
      config.PROJECTION_SCHEMA,
      positionals[0]!,
      {
        allowPartial: flags['allow-partial'] === true,
        ...(force ? { force } : {}),
        logger,
      },
    );
    if (forced)
      io.stdout(
        `promoted with --force by ${force!.operator}: ${force!.reason} (logged, and kept in the schema's comment)`,
      );
    io.stdout(
      `promoted ${positionals[0]} to ${config.PROJECTION_SCHEMA}; the previous state is kept as ${previous}`,
    );
    return 0;
  },
};

/** `--force` with its audit: a reason and an operator, printable and bounded, or a usage error. */
export function promoteForce(
  force: boolean,
  values: { reason?: string | undefined; by?: string | undefined },
): PromoteForce | undefined {
  if (!force) {
    if (values.reason !== undefined || values.by !== undefined)
      throw new UsageError('--reason and --by go with --force');
    return undefined;
  }
  for (const name of ['reason', 'by'] as const) {
    const v = values[name];
    if (v === undefined || v.trim() === '')
      throw new UsageError(`--force needs --${name}: a forced promotion is audited`);
    const problem = partnerTextProblem(v, 2000);
    if (problem) throw new UsageError(`--${name} ${problem}`);
  }
  return { operator: values.by!.trim(), reason: values.reason!.trim() };
}

export const replayListCommand: Command = {
  words: ['replay', 'list'],
  usage: 'replay list',
  summary: 'list the live, rebuilt and previous projection schemas',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, ['DATABASE_URL']);
    for (const s of await listProjectionSchemas(config.DATABASE_URL, config.PROJECTION_SCHEMA)) {
      io.stdout(s === config.PROJECTION_SCHEMA ? `${s}  (live)` : s);
    }
    return 0;
  },
};

export const replayDropCommand: Command = {
  words: ['replay', 'drop'],
  usage: 'replay drop <schema>',
  summary: 'drop a rebuilt or previous projection schema (never the live one)',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length !== 1) throw new UsageError('name one schema');
    const config = loadConfig(process.env, ['DATABASE_URL']);
    await dropProjectionSchema(config.DATABASE_URL, config.PROJECTION_SCHEMA, positionals[0]!);
    io.stdout(`dropped ${positionals[0]}`);
    return 0;
  },
};
