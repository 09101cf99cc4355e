/**
 * Reconciler throughput: `reconcileSwap` (every pure check) over generated inputs, and the append of
 * their SwapReconciled events to Kafka (acks = all), measured apart and combined as one swap after the
 * other (issue 15: >= 5,000 swaps/s judged and recorded). The payload signature check
 * (inspectSwapPayload) is not in the figure: its inputs come ready-made, as the pure checks take them.
 */
import type { Kafka } from 'kafkajs';
import { EventAppender, EventCodec } from '../src/events/index.ts';
import { newEvent } from '../src/events/keys.ts';
import type { SwapEvent } from '../src/events/types.ts';
import { DEFAULT_RECONCILIATION_POLICY, reconcileSwap, toSwapReconciled } from '../src/reconciler/index.ts';
import type { ReconciliationResult } from '../src/reconciler/index.ts';
import { input } from '../test/reconciler/support.ts';
import { round, seconds, type Endpoints, type Figure } from './common.ts';

/** Inputs that vary the reported amount and fees, so that every verdict's path is taken. */
function inputs(n: number) {
  return Array.from({ length: n }, (_, i) =>
    input({
      final: {
        amount: i % 7 === 0 ? `1.2341478901234567${i % 100}` : '1.234147890123456789',
        providerFees: i % 5 === 0 ? '0.0016' : '0.0015',
        payoutTransactionId: i % 13 === 0 ? null : `0x${i.toString(16).padStart(64, '0')}`,
      },
    }),
  );
}

export async function benchReconciler(
  kafka: Kafka,
  env: Endpoints,
  run: string,
  swaps: number,
): Promise<{ figures: Figure[]; topic: string }> {
  const given = inputs(swaps);
  const started = process.hrtime.bigint();
  const results: ReconciliationResult[] = given.map((i) => reconcileSwap(i, DEFAULT_RECONCILIATION_POLICY));
  const tJudge = seconds(started);
  const events: SwapEvent[] = results.map((r, i) =>
    newEvent('SwapReconciled', new Date(), toSwapReconciled(r, '0190f7a0-0000-7000-8000-000000000000'), {
      providerId: 'partner-a',
      swapId: `swap-${run}-${i}`,
      source: 'reconciler',
    }),
  );

  const topic = `bench.${run}.reconciled`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 12 }], waitForLeaders: true });
  await admin.disconnect();
  const appender = new EventAppender({
    kafka,
    codec: new EventCodec(env.SCHEMA_REGISTRY_URL, topic),
    topic,
    sendTimeoutMs: 60_000,
  });
  await appender.start();
  // The worker appends verdicts one by one; concurrent appends share produce requests (64 in flight).
  const appendStarted = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < events.length) await appender.append(events[next++]!);
    }),
  );
  const tRecord = seconds(appendStarted);
  await appender.stop();

  const judged = Math.round(swaps / tJudge);
  const recorded = Math.round(swaps / tRecord);
  const combined = Math.round(swaps / (tJudge + tRecord));
  const verdicts = new Map<string, number>();
  for (const r of results) verdicts.set(r.verdict, (verdicts.get(r.verdict) ?? 0) + 1);
  return {
    topic,
    figures: [
      {
        name: 'reconciler: judged and recorded',
        value: combined,
        unit: 'swaps/s',
        reference: { name: 'pure checks alone', value: judged, unit: 'swaps/s' },
        ratio: combined / judged,
        goal: '>= 5,000 swaps/s',
        pass: combined >= 5000,
        note: `${swaps} swaps (${[...verdicts].map(([v, n]) => `${v} ${n}`).join(', ')}); checks ${round(tJudge, 2)} s, appends ${round(tRecord, 2)} s (${recorded} swaps/s)`,
      },
    ],
  };
}
