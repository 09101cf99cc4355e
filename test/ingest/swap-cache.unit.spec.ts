import { describe, expect, it } from 'vitest';
import { cachedSwapLookup } from '../../src/ingest/webhook/run.ts';
import type { KnownSwap, SwapLookup } from '../../src/ingest/webhook/server.ts';

const FINAL: KnownSwap = {
  final: true,
  projected: true,
  status: 'FINISHED',
  statusClass: 'final',
  amountTo: '1.5',
  providerFees: null,
  referralFees: null,
  payoutNetworkFees: null,
  payinTransactionId: null,
  payoutTransactionId: null,
  refundTransactionId: null,
};

/** A lookup over a table the test changes, counting the questions that reach it. */
function table(rows: Record<string, KnownSwap>) {
  const asked: string[] = [];
  const lookup: SwapLookup = {
    find(swapId, providerId) {
      asked.push(`${providerId}/${swapId}`);
      return Promise.resolve(rows[`${providerId}/${swapId}`]);
    },
  };
  return { rows, asked, lookup };
}

describe('cachedSwapLookup', () => {
  it('answers an open swap from memory within the TTL, and asks again after it', async () => {
    let clock = 0;
    const t = table({ 'p/s1': { final: false, projected: true } });
    const cached = cachedSwapLookup(t.lookup, { ttlMs: 2000, now: () => clock });
    expect(await cached.find('s1', 'p')).toEqual({ final: false, projected: true });
    clock = 1999;
    expect(await cached.find('s1', 'p')).toEqual({ final: false, projected: true });
    expect(t.asked).toEqual(['p/s1']);
    clock = 2000;
    t.rows['p/s1'] = FINAL; // became final meanwhile: seen once the entry expired
    expect(await cached.find('s1', 'p')).toEqual(FINAL);
    expect(t.asked).toEqual(['p/s1', 'p/s1']);
  });

  it('never caches a final or an unknown swap', async () => {
    const t = table({ 'p/done': FINAL });
    const cached = cachedSwapLookup(t.lookup, { now: () => 0 });
    for (let i = 0; i < 3; i++) {
      expect(await cached.find('done', 'p')).toEqual(FINAL);
      expect(await cached.find('ghost', 'p')).toBeUndefined();
    }
    expect(t.asked).toHaveLength(6);
  });

  it('keys by provider and swap id: another provider with the same swap id is asked for', async () => {
    const t = table({ 'a/s': { final: false, projected: true } });
    const cached = cachedSwapLookup(t.lookup, { now: () => 0 });
    await cached.find('s', 'a');
    expect(await cached.find('s', 'b')).toBeUndefined();
    expect(t.asked).toEqual(['a/s', 'b/s']);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const t = table({
      'p/1': { final: false, projected: true },
      'p/2': { final: false, projected: true },
      'p/3': { final: false, projected: true },
    });
    const cached = cachedSwapLookup(t.lookup, { maxEntries: 2, now: () => 0 });
    for (const id of ['1', '2', '3']) await cached.find(id, 'p');
    await cached.find('3', 'p');
    await cached.find('2', 'p');
    expect(t.asked).toEqual(['p/1', 'p/2', 'p/3']);
    await cached.find('1', 'p');
    expect(t.asked).toEqual(['p/1', 'p/2', 'p/3', 'p/1']);
  });
});

describe('cachedSwapLookup.forget (a final report appended by the webhook)', () => {
  it('reads the swap on every report for a minute, then caches it again', async () => {
    let clock = 0;
    const t = table({ 'p/s': { final: false, projected: true } });
    const cached = cachedSwapLookup(t.lookup, { ttlMs: 2000, now: () => clock });
    await cached.find('s', 'p');
    cached.forget('s', 'p');
    await cached.find('s', 'p'); // not folded yet: still open in Postgres, and not remembered so
    await cached.find('s', 'p');
    expect(t.asked).toHaveLength(3);
    clock = 60_001;
    await cached.find('s', 'p');
    await cached.find('s', 'p');
    expect(t.asked).toHaveLength(4);
  });
});
