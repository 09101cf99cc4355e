import type { KafkaMessage } from 'kafkajs';
import { contextFromHeaders, recordSpan, SpanKind } from '../observability/tracing.ts';
import type { JournalRow } from './state.ts';

/**
 * One `project` span per folded message that carries a trace context, as a child of the span that
 * appended it: so a swap's trace runs from the gateway call through Kafka into the projection. Recorded
 * once the batch committed (the fold is one transaction for the whole batch).
 */
export function traceFolded(
  messages: readonly KafkaMessage[],
  journal: readonly JournalRow[],
  at: { topic: string; partition: number; seconds: number },
): void {
  const startTime = Date.now() - at.seconds * 1000;
  const byOffset = new Map(journal.map((row) => [row.offset.toString(), row]));
  for (const m of messages) {
    const parent = contextFromHeaders(m.headers);
    if (!parent) continue;
    const row = byOffset.get(m.offset);
    recordSpan('project', {
      kind: SpanKind.CONSUMER,
      parent,
      startTime,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.destination.name': at.topic,
        'messaging.kafka.destination.partition': at.partition,
        'messaging.kafka.message.offset': Number(m.offset),
        'swap_ledger.event_type': row?.eventType ?? String(m.headers?.['event-type'] ?? ''),
        // No journal row: a redelivery of an event already folded.
        'swap_ledger.outcome': row?.outcome ?? 'duplicate',
      },
    });
  }
}
