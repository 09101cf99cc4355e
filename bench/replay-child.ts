/**
 * One replay in its own process, so its peak resident memory is its own: replays `--topic` up to
 * 1/`--fraction` (or `--share` num/den) of every partition and prints one JSON line (events, seconds, peak RSS, checksum).
 */
import { configSpec } from '../src/config/config.ts';
import { createKafka, EventCodec } from '../src/events/index.ts';
import { replay } from '../src/ops/replay.ts';
import { createLogger } from '../src/observability/log.ts';
import { endpoints, intOption, stringOption } from './common.ts';

async function main() {
  const env = await endpoints();
  const topic = stringOption('topic');
  if (!topic) throw new Error('--topic is required');
  const fraction = intOption('fraction', 1);
  // --share num/den: that share of every partition (bench/growth.ts's steps), else 1/--fraction of it.
  const share = stringOption('share')?.match(/^(\d+)\/([1-9]\d*)$/);
  if (stringOption('share') !== undefined && !share) throw new Error('--share needs num/den');
  const [num, den] = share ? [BigInt(share[1]!), BigInt(share[2]!)] : [1n, BigInt(fraction)];
  const batch = intOption('batch', 5000);
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS.split(','), clientId: 'bench-replay' });
  const admin = kafka.admin();
  await admin.connect();
  const highs = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const offsets = new Map(highs.map((p) => [p.partition, (BigInt(p.high) * num) / den]));
  const r = await replay({
    databaseUrl: env.DATABASE_URL,
    kafka,
    codec: new EventCodec(env.SCHEMA_REGISTRY_URL, topic),
    topic,
    liveSchema: stringOption('live') ?? 'bench_no_live',
    until: { kind: 'offsets', offsets },
    logger: createLogger({ level: 'silent' }),
    batchEvents: batch,
    // As `swap-ledger replay` runs it (REPLAY_WORKERS worker threads).
    parallel: {
      workers: intOption('workers', configSpec.REPLAY_WORKERS.default),
      kafkaBrokers: env.KAFKA_BROKERS.split(','),
      schemaRegistryUrl: env.SCHEMA_REGISTRY_URL,
      clientId: 'bench-replay',
    },
  });
  console.log(
    JSON.stringify({
      events: r.events,
      seconds: r.seconds,
      phases: r.phases,
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      // Its worker threads' too: one process.
      cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
      schema: r.schema,
      checksum: r.rebuilt.checksum,
      liveChecksum: r.live?.checksum ?? null,
      equal: r.equal,
    }),
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
