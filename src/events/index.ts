export { EventCodec, EventDecodeError, valueSubject, encodeEvent, envelopeType } from './codec.ts';
export { EventAppender, AppendTimeoutError, type AppenderOptions, type EncodedEvent } from './producer.ts';
export { createKafka } from './kafka.ts';
export { openAppender, createConfiguredTopics } from './open.ts';
export { createTopics, createTopicsReady, type TopicPlan, type TopicReport } from './topics.ts';
export { uuidv7 } from './ids.ts';
export type * from './types.ts';
