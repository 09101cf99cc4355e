import type { SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { DurablePublisher, PublishPath } from '../outbox/outbox.ts';

/** Records events; a failure of both Kafka and the outbox is logged with the events, then thrown. */
export async function recordEvents(
  deps: { readonly publisher: Pick<DurablePublisher, 'publish'>; readonly logger: Logger },
  events: SwapEvent[],
  what: string,
): Promise<PublishPath> {
  try {
    return await deps.publisher.publish(events);
  } catch (e) {
    // Last resort: the whole event in the log, so an operator can append it by hand.
    deps.logger.fatal({ err: e, events }, `${what} could not be recorded`);
    throw e;
  }
}
