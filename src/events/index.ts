export { EventCodec, EventDecodeError, valueSubject } from './codec.ts';
export { EventAppender, AppendTimeoutError, type AppenderOptions } from './producer.ts';
export { createKafka } from './kafka.ts';
export { openAppender } from './open.ts';
export { createTopics, createTopicsReady, type TopicPlan, type TopicReport } from './topics.ts';
export { uuidv7 } from './ids.ts';
export type * from './types.ts';
