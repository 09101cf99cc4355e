import { AssignerProtocol, type Kafka, type PartitionAssigner } from 'kafkajs';
import { createPool } from '../db/client.ts';
import { EventCodec } from '../events/codec.ts';
import { createKafka } from '../events/kafka.ts';
import { uuidv7 } from '../events/ids.ts';
import { createLogger, type Logger } from '../observability/log.ts';
import { Projector } from './projector.ts';

/**
 * One part of a rebuild: the projector in rebuild mode over the partitions it owns, folding them into the
 * rebuilt schema up to their end offsets. Partitions own disjoint rows, so parts run side by side: in the
 * replay's own thread (one part), or one per worker thread (src/projector/rebuild-worker.mjs), each with
 * its own event loop on its own core.
 */
export interface RebuildPart {
  kafka: Kafka;
  codec: EventCodec;
  databaseUrl: string;
  topic: string;
  schema: string;
  /** The partitions this part owns, with the offset each is folded up to (exclusive). */
  ends: ReadonlyMap<number, bigint>;
  batchEvents: number;
  /** Partitions folded at once within the part. */
  concurrency: number;
  logger: Logger;
  onBatch: (events: number) => void;
}

/** A group of one member that takes exactly the part's partitions (a throwaway group per part). */
export function partAssigner(topic: string, partitions: readonly number[]): PartitionAssigner {
  const name = 'SwapLedgerRebuildPart';
  return () => ({
    name,
    version: 0,
    async assign({ members }) {
      return members.map(({ memberId }, i) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: i === 0 ? { [topic]: [...partitions] } : {},
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      return {
        name,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
      };
    },
  });
}

export async function foldRebuildPart(part: RebuildPart): Promise<void> {
  const pool = createPool(part.databaseUrl, {
    searchPath: part.schema,
    max: part.concurrency + 1,
    applicationName: 'swap-ledger-replay',
    // The rebuilt schema is private until promoted and each batch commits with its checkpoint: a crash
    // loses the last commits only together with their checkpoints, so commits need not wait for the disk.
    synchronousCommit: false,
  });
  const projector = new Projector({
    kafka: part.kafka,
    codec: part.codec,
    pool,
    topic: part.topic,
    deadLetterTopic: '', // a rebuild publishes no dead letter
    groupId: `swap-ledger-replay-${uuidv7()}`,
    logger: part.logger,
    maxBatchEvents: part.batchEvents,
    partitionsConsumedConcurrently: part.concurrency,
    rebuild: { until: part.ends, assigner: partAssigner(part.topic, [...part.ends.keys()]) },
    onBatch: (b) => part.onBatch(b.events),
  });
  try {
    await projector.start();
    await projector.caughtUp();
  } finally {
    await projector.stop().catch(() => {});
    await pool.end();
  }
}

/** What a worker thread is given: plain data, from which it makes its own clients. */
export interface RebuildPartData {
  kafkaBrokers: string[];
  schemaRegistryUrl: string;
  clientId: string;
  databaseUrl: string;
  topic: string;
  schema: string;
  ends: [number, string][];
  batchEvents: number;
  concurrency: number;
}

/** A worker thread's part: its own Kafka client, registry client, pool and logger. */
export function foldRebuildPartData(data: RebuildPartData, onBatch: (events: number) => void): Promise<void> {
  const logger = createLogger({ level: 'warn', name: 'replay' });
  return foldRebuildPart({
    kafka: createKafka({ brokers: data.kafkaBrokers, clientId: data.clientId, logger }),
    codec: new EventCodec(data.schemaRegistryUrl, data.topic),
    databaseUrl: data.databaseUrl,
    topic: data.topic,
    schema: data.schema,
    ends: new Map(data.ends.map(([p, end]) => [p, BigInt(end)])),
    batchEvents: data.batchEvents,
    concurrency: data.concurrency,
    logger,
    onBatch,
  });
}
