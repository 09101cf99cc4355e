import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { WorkLeases } from '../../src/db/lease.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { testStack, uniqueName } from '../support/context.ts';

/**
 * Work leases on real Postgres: of instances claiming the same keys at once each key goes to exactly one; a
 * held lease is no one else's until it expires; a released one waits for its next time (or, anyIdle, not).
 */
describe('work leases (real Postgres)', () => {
  let pools: pg.Pool[];
  const T = Date.parse('2026-01-01T00:00:00Z');

  beforeAll(async () => {
    await migratePlatform(testStack().databaseUrl);
    pools = [0, 1, 2, 3].map(() => createPool(testStack().databaseUrl, { max: 2 }));
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  it('four instances claiming the same 300 keys at once: each key goes to exactly one', async () => {
    const kind = uniqueName('lease-race');
    const keys = Array.from({ length: 300 }, (_, i) => `k${i}`);
    const instances = pools.map((p, i) => new WorkLeases(p, kind, 60_000, `owner-${i}`));
    // Each claims in batches of 20, in its own order: the batches of different instances overlap everywhere.
    const won = await Promise.all(
      instances.map(async (lease, i) => {
        const mine: string[] = [];
        const order = i % 2 ? [...keys].reverse() : keys;
        for (let b = 0; b < order.length; b += 20)
          mine.push(...(await lease.claim(order.slice(b, b + 20), T)));
        return mine;
      }),
    );
    const all = won.flat();
    expect(all.length).toBe(300);
    expect(new Set(all).size).toBe(300);
    // Nothing is left to claim while the leases are held.
    expect((await instances[0]!.claim(keys, T + 59_999)).size).toBe(0);
    // Expired (their holders died): anyone's again.
    expect((await instances[0]!.claim(keys, T + 60_000)).size).toBe(300);
  });

  it('a released lease waits for its next time; anyIdle takes it at once, never a held one', async () => {
    const kind = uniqueName('lease-release');
    const a = new WorkLeases(pools[0]!, kind, 60_000, 'a');
    const b = new WorkLeases(pools[1]!, kind, 60_000, 'b');
    expect([...(await a.claim(['s1', 's2'], T))]).toEqual(['s1', 's2']);
    expect((await b.claim(['s1', 's2'], T, { anyIdle: true })).size).toBe(0); // held: not even anyIdle
    // b cannot release a's lease.
    await b.release([{ key: 's1', nextAtMs: T }]);
    expect((await b.claim(['s1'], T + 1)).size).toBe(0);
    await a.release([
      { key: 's1', nextAtMs: T + 3_600_000 },
      { key: 's2', nextAtMs: T + 3_600_000 },
    ]);
    expect((await b.claim(['s1'], T + 10)).size).toBe(0); // not due
    expect([...(await b.claim(['s1'], T + 10, { anyIdle: true }))]).toEqual(['s1']);
    expect([...(await b.claim(['s2'], T + 3_600_000))]).toEqual(['s2']);
    // Pruned rows are due rows: an idle lease due long ago goes, a held one stays.
    await b.release([{ key: 's2', nextAtMs: T }]);
    expect(await b.prune(T + 1)).toBe(1);
    expect((await a.claim(['s1', 's2'], T + 20)).size).toBe(1);
  });
});
