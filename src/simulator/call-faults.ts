import { setTimeout as delay } from 'node:timers/promises';
import {
  MESSAGE_KEY_STATUS,
  RATE_LIMITED_STATUS,
  isDocumentedMessageKey,
  type PartnerOperation,
} from '../partner/types.ts';
import type { CallFault, InjectOptions } from './faults.ts';
import { Answer, type Reply } from './http.ts';
import { malformed } from './malformed.ts';

/** Injected call faults: which call takes which fault, and how a fault changes the answer. */

export class CallFaultQueue {
  private entries: { operation: PartnerOperation; fault: CallFault; remaining: number; swapId?: string }[] =
    [];

  inject(operation: PartnerOperation, fault: CallFault, options: InjectOptions = {}): void {
    const times = options.times ?? 1;
    if (!(times >= 1)) throw new RangeError('times must be >= 1');
    this.entries.push({
      operation,
      fault,
      remaining: times,
      ...(options.swapId ? { swapId: options.swapId } : {}),
    });
  }

  clear(): void {
    this.entries = [];
  }

  take(operation: PartnerOperation, swapId: string | undefined): CallFault | undefined {
    const i = this.entries.findIndex(
      (f) => f.operation === operation && (f.swapId === undefined || f.swapId === swapId),
    );
    if (i < 0) return undefined;
    const entry = this.entries[i]!;
    if (--entry.remaining <= 0) this.entries.splice(i, 1);
    return entry.fault;
  }
}

/**
 * The answer to a call under `fault`: an early fault answer, a delay, a dropped connection (after the work for
 * swap creation), or the routed answer, possibly malformed. `route` throws an Answer to answer with an error.
 */
export async function answerWithFault(
  operation: PartnerOperation,
  fault: CallFault | undefined,
  route: () => unknown,
  closing: AbortSignal,
  now: () => Date,
): Promise<Reply | 'dropped'> {
  if (fault) {
    const early = faultReply(fault, operation, now);
    if (early) return early;
    if (fault.kind === 'slow') {
      try {
        await delay(fault.delayMs, undefined, { signal: closing });
      } catch {
        return 'dropped';
      }
    }
    if (fault.kind === 'drop-connection' && operation !== 'swap-fixed' && operation !== 'swap-float')
      return 'dropped';
  }
  let reply: Reply;
  try {
    reply = { status: 200, body: route() };
  } catch (e) {
    if (e instanceof Answer) return e.reply;
    return { status: 500, body: { code: 500, message: (e as Error).message } };
  }
  if (fault?.kind === 'drop-connection') return 'dropped'; // the swap exists; its creator never hears of it
  if (fault?.kind === 'malformed-body')
    return malformed(reply, operation, fault.variant, fault.field, fault.value);
  return reply;
}

function faultReply(fault: CallFault, operation: PartnerOperation, now: () => Date): Reply | undefined {
  switch (fault.kind) {
    case 'error-key': {
      const status =
        fault.status ??
        (isDocumentedMessageKey(fault.messageKey) ? MESSAGE_KEY_STATUS[fault.messageKey] : 400);
      let fields = fault.additionalFields;
      if (!fields && fault.messageKey.startsWith('FROM_CURRENCY_M')) {
        fields = { minRequiredAmount: '0.001', maxRequiredAmount: '10' };
      }
      return {
        status,
        body: {
          messageKey: fault.messageKey,
          message: fault.message ?? `simulated ${fault.messageKey} on ${operation}`,
          ...(fields ? { additionalFields: fields } : {}),
        },
      };
    }
    case 'rate-limited': {
      const headers: Record<string, string> = {
        'x-ratelimit-limit': String(fault.limit ?? 100),
        'x-ratelimit-remaining': String(fault.remaining ?? 0),
        'x-ratelimit-reset': String(fault.reset ?? Math.ceil(now().getTime() / 1000) + 1),
      };
      if (fault.retryAfter !== null) headers['retry-after'] = fault.retryAfter ?? '0';
      return {
        status: RATE_LIMITED_STATUS,
        headers,
        body: { code: RATE_LIMITED_STATUS, message: 'rate limit exceeded' },
      };
    }
    case 'server-error': {
      const status = fault.status ?? 500;
      if (fault.body === 'text')
        return { status, body: null, raw: { text: 'Internal Server Error', contentType: 'text/plain' } };
      if (fault.body === 'empty') return { status, body: null, raw: { text: '', contentType: 'text/plain' } };
      return { status, body: { code: status, message: 'simulated server error' } };
    }
    case 'http-status':
      return {
        status: fault.status,
        body: null,
        raw: { text: fault.body, contentType: fault.contentType ?? 'application/json' },
      };
    default:
      return undefined;
  }
}
