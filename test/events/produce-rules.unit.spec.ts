import { describe, expect, it } from 'vitest';
import {
  MultipleErrors,
  NetworkError,
  ProtocolError,
  ResponseError,
  TimeoutError,
  UserError,
} from '@platformatic/kafka';
import { partitionOf, produceOutcome } from '../../src/events/produce-rules.ts';
import { swapEventPartitioner } from '../../src/events/producer.ts';
import { quoteKey, requestKey, swapKey } from '../../src/events/keys.ts';

/** A produce response naming one partition's error, as @platformatic/kafka builds it. */
const answered = (code: number) =>
  new ResponseError(0, 11, { '/responses/0/partition_responses/0': [code, null] }, {});
const retried = (...errors: Error[]) => new MultipleErrors('produce failed 3 times.', errors);

describe('the appender places events as kafkajs did', () => {
  it('every kind of key lands in the partition kafkajs chose, at any partition count', () => {
    const kafkajs = swapEventPartitioner();
    for (const partitions of [1, 3, 12, 64]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({
        partitionId: i,
        leader: 0,
        partitionErrorCode: 0,
        replicas: [0],
        isr: [0],
      }));
      for (let i = 0; i < 500; i++) {
        for (const key of [swapKey(`p${i % 7}`, `swap-${i}`), requestKey(`r-${i}`), quoteKey(`q${i}é`)]) {
          const expected = kafkajs({ topic: 't', partitionMetadata, message: { key, value: null } });
          expect(partitionOf(key, partitions), key).toBe(expected);
        }
      }
    }
  });

  it("a swap's events keyed with or without its provider share a partition", () => {
    expect(partitionOf(swapKey('changelly', 'abc-1'), 12)).toBe(partitionOf('abc-1', 12));
  });
});

describe('what a failed produce says of its batch', () => {
  it('no answer, a timeout or a leader change: unknown (the same batch is sent again)', () => {
    expect(produceOutcome(new NetworkError('Connection closed'))).toBe('unknown');
    expect(produceOutcome(new TimeoutError('Request timed out'))).toBe('unknown');
    expect(produceOutcome(answered(6))).toBe('unknown'); // NOT_LEADER_OR_FOLLOWER
    expect(produceOutcome(answered(20))).toBe('unknown'); // NOT_ENOUGH_REPLICAS_AFTER_APPEND
    expect(produceOutcome(retried(answered(10), new NetworkError('Connection refused')))).toBe('unknown');
    expect(produceOutcome(new Error('anything else'))).toBe('unknown');
  });

  it('Kafka answered no, or the message never left: refused', () => {
    expect(produceOutcome(answered(10))).toBe('refused'); // MESSAGE_TOO_LARGE
    expect(produceOutcome(retried(new NetworkError('Connection refused'), answered(87)))).toBe('refused'); // INVALID_RECORD
    expect(produceOutcome(new UserError('Failed to serialize a message.'))).toBe('refused');
  });

  it('a sequence error: desync (a new producer id)', () => {
    expect(produceOutcome(answered(45))).toBe('desync'); // OUT_OF_ORDER_SEQUENCE_NUMBER
    expect(produceOutcome(retried(answered(59)))).toBe('desync'); // UNKNOWN_PRODUCER_ID
    expect(produceOutcome(new ProtocolError('INVALID_PRODUCER_EPOCH'))).toBe('desync');
  });
});
