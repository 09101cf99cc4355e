import { describe, expect, it } from 'vitest';
import {
  MultipleErrors,
  NetworkError,
  ProtocolError,
  ResponseError,
  TimeoutError,
  UserError,
} from '@platformatic/kafka';
import {
  laneStepAfterFailure,
  partitionOf,
  produceOutcome,
  unknownBeforeLast,
} from '../../src/events/produce-rules.ts';
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

describe("a lane's step after a failed send", () => {
  it('an attempt before the last one of unknown outcome is seen through the client retries', () => {
    expect(unknownBeforeLast(retried(new NetworkError('Connection closed'), answered(10)))).toBe(true);
    expect(unknownBeforeLast(retried(answered(6), answered(87)))).toBe(true); // NOT_LEADER, then INVALID_RECORD
    // As the client reports one destination's retries: wrapped again ("Producing messages failed.").
    const perDestination = (e: Error) => new MultipleErrors('Producing messages failed.', [e]);
    expect(
      unknownBeforeLast(perDestination(retried(new NetworkError('Connection closed'), answered(10)))),
    ).toBe(true);
    expect(unknownBeforeLast(perDestination(retried(answered(10))))).toBe(false);
    expect(unknownBeforeLast(retried(answered(10)))).toBe(false);
    expect(unknownBeforeLast(retried(answered(87), answered(10)))).toBe(false); // refused twice: never written
    expect(unknownBeforeLast(answered(10))).toBe(false);
    expect(unknownBeforeLast(new TimeoutError('Request timed out'))).toBe(false); // the last attempt itself
    expect(unknownBeforeLast(new Error('anything else'))).toBe(false);
  });

  it('refused at its first attempt: its appends fail, the producer id stays', () => {
    expect(laneStepAfterFailure('refused', false)).toEqual({ resend: false, renewProducer: false });
  });

  it('refused after an attempt of unknown outcome: its appends fail and no later batch gets its sequence range', () => {
    expect(laneStepAfterFailure('refused', true)).toEqual({ resend: false, renewProducer: true });
  });

  it('outcome unknown: the same batch is sent again under the same producer id', () => {
    expect(laneStepAfterFailure('unknown', false)).toEqual({ resend: true, renewProducer: false });
    expect(laneStepAfterFailure('unknown', true)).toEqual({ resend: true, renewProducer: false });
  });

  it('a sequence error: sent again on a new producer id', () => {
    expect(laneStepAfterFailure('desync', false)).toEqual({ resend: true, renewProducer: true });
    expect(laneStepAfterFailure('desync', true)).toEqual({ resend: true, renewProducer: true });
  });
});
