import type { Config } from '../config/config.ts';
import type { SwapEvent } from '../events/types.ts';
import { UsageError } from './command.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/** Appends one operator event and waits for Kafka's acknowledgement. */
export async function appendOperatorEvent(config: Config, event: SwapEvent): Promise<void> {
  // The Kafka client and the registry load when an event is appended, not for a refusal or a read.
  const { openAppender } = await import('../events/open.ts');
  const appender = await openAppender(config, 'ops');
  try {
    await appender.append(event);
  } finally {
    await appender.stop();
  }
}

/** Operator mistakes (bad input, unknown or resolved dead letter) are usage errors: exit 2, nothing appended. */
export async function asUsage<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof InputRefusedError && !(e instanceof UsageError)) throw new UsageError(e.message);
    throw e;
  }
}
