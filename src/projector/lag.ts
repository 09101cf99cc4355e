import type { Admin } from 'kafkajs';
import type pg from 'pg';

export interface PartitionLag {
  partition: number;
  endOffset: bigint;
  nextOffset: bigint;
  lag: bigint;
}

/** How far the projection in the pool's schema is behind the topic, per partition. */
export async function projectionLag(
  admin: Admin,
  client: pg.ClientBase,
  topic: string,
): Promise<PartitionLag[]> {
  const ends = await admin.fetchTopicOffsets(topic);
  const r = await client.query<{ partition: number; next_offset: string }>(
    'select partition, next_offset from projector_checkpoints where topic = $1',
    [topic],
  );
  const stored = new Map(r.rows.map((row) => [row.partition, BigInt(row.next_offset)]));
  return ends
    .map((e) => {
      const endOffset = BigInt(e.high);
      const nextOffset = stored.get(e.partition) ?? 0n;
      return { partition: e.partition, endOffset, nextOffset, lag: endOffset - nextOffset };
    })
    .sort((a, b) => a.partition - b.partition);
}
