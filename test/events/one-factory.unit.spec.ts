import { describe, expect, it } from 'vitest';
import type { SwapEvent } from '../../src/events/types.ts';
import { swapCreationFailedEvent, swapRequestedEvent } from '../../src/gateway/events.ts';
import { correctionEvent, deadLetterDiscardedEvent } from '../../src/ops/operator-events.ts';
import { statusReported, swapRequest } from '../../src/testing/events.ts';

/** The 48-bit millisecond prefix of a UUIDv7. */
const idMs = (eventId: string): number => Number.parseInt(eventId.replaceAll('-', '').slice(0, 12), 16);

// Every writer goes through newEvent: the id is a UUIDv7 of the event's own time, never of the real clock.
describe('one event factory', () => {
  const now = new Date('2026-02-03T04:05:06.789Z');
  const built: [string, SwapEvent][] = [
    ['gateway SwapRequested', swapRequestedEvent({ providerId: 'p', now }, 'r-1', 'idem-1', swapRequest())],
    [
      'gateway SwapCreationFailed',
      swapCreationFailedEvent({ providerId: 'p', now }, 'r-1', {
        kind: 'partner_error',
        httpStatus: 400,
        errorKey: null,
        message: 'no',
      }),
    ],
    [
      'ops SwapCorrected',
      correctionEvent({ swapId: 's-1', providerId: 'p', by: 'ann', reason: 'typo', amount: '1' }, now),
    ],
    [
      'ops DeadLetterDiscarded',
      deadLetterDiscardedEvent(
        { deadLetterId: 'd-1', aggregateKey: 'swap:p:s-1' },
        { by: 'ann', reason: 'junk' },
        now,
      ),
    ],
    ['testing StatusReported', statusReported('s-1', 'PENDING', {}, { time: now.toISOString() })],
  ];

  it.each(built)('%s: id, occurredAt and recordedAt share one instant', (_name, event) => {
    expect(event.occurredAt).toBe(now.toISOString());
    expect(event.recordedAt).toBe(event.occurredAt);
    expect(idMs(event.eventId)).toBe(now.getTime());
  });

  it('keys follow the key rules: request, swap with its provider, and the swapId read back from a swap key', () => {
    expect(built[0]![1]).toMatchObject({ aggregateKey: 'request:r-1', swapId: null, source: 'gateway' });
    expect(built[2]![1]).toMatchObject({ aggregateKey: 'swap:p:s-1', swapId: 's-1', source: 'ops' });
    expect(built[3]![1]).toMatchObject({ aggregateKey: 'swap:p:s-1', swapId: 's-1', providerId: '-' });
  });
});
