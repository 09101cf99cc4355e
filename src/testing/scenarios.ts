import type { SwapEvent } from '../events/types.ts';
import {
  quoteReceived,
  statusReported,
  swapCorrected,
  swapCreated,
  swapCreationFailed,
  swapRequested,
} from './events.ts';

/**
 * A mixed, reproducible history of `swaps` swap lifecycles for projector tests and benchmarks:
 * progressions through PENDING/ON_HOLD to each final status, webhook+poll repeats (no-ops), the
 * confirming poll after a final webhook, events after final (rejected), corrections, redeliveries of
 * the same event id, failed requests and quotes.
 */
export function lifecycleScenario(swaps: number, seed = 1): SwapEvent[] {
  let s = seed >>> 0;
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const events: SwapEvent[] = [];
  let t = 0;
  const tick = () => ({ time: new Date(Date.UTC(2026, 10, 1) + t++ * 1000).toISOString() });
  for (let i = 0; i < swaps; i++) {
    const id = `swap-${seed}-${i}`;
    const provider = i % 3 === 0 ? 'partner-b' : 'partner-a';
    const opts = { providerId: provider, ...tick() };
    events.push(swapRequested(`req-${id}`, opts));
    if (i % 17 === 5) {
      events.push(
        swapCreationFailed(`req-${id}`, i % 2 ? 'outcome_unknown' : 'partner_error', {
          providerId: provider,
          ...tick(),
        }),
      );
      continue;
    }
    if (i % 11 === 0) events.push(quoteReceived(`quote-${id}`, { providerId: provider, ...tick() }));
    events.push(swapCreated(id, { requestId: `req-${id}`, ...opts }));
    const pending = statusReported(
      id,
      'PENDING',
      { payinTransactionId: `in-${i}` },
      { providerId: provider, source: 'webhook', ...tick() },
    );
    events.push(pending);
    events.push(
      statusReported(id, 'PENDING', { payinTransactionId: `in-${i}` }, { providerId: provider, ...tick() }),
    );
    if (rand() < 0.3) {
      events.push(statusReported(id, 'ON_HOLD', {}, { providerId: provider, ...tick() }));
      events.push(statusReported(id, 'PENDING', {}, { providerId: provider, ...tick() }));
    }
    if (rand() < 0.1) events.push(pending); // redelivery of the same event id
    const r = rand();
    if (r < 0.15) continue; // still open
    const final = r < 0.75 ? 'FINISHED' : r < 0.9 ? 'REFUNDED' : 'EXPIRED';
    const amount = final === 'FINISHED' ? `0.${String(200000 + i).padStart(6, '0')}123456789012` : null;
    events.push(
      statusReported(
        id,
        final,
        { amount, payoutTransactionId: final === 'FINISHED' ? `out-${i}` : null },
        { providerId: provider, source: 'webhook', ...tick() },
      ),
    );
    events.push(
      statusReported(
        id,
        final,
        { amount, providerFees: '0.0005', referralFees: '0.0001', payoutNetworkFees: '0.002' },
        { providerId: provider, ...tick() },
      ),
    );
    if (rand() < 0.1) events.push(statusReported(id, 'PENDING', {}, { providerId: provider, ...tick() }));
    if (final === 'FINISHED' && rand() < 0.05) {
      events.push(
        swapCorrected(id, { amount: '0.3', reason: `statement ${i}` }, { providerId: provider, ...tick() }),
      );
    }
  }
  return events;
}
