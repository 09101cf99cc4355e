import { describe, expect, it } from 'vitest';
import {
  RoundRunner,
  type GroupWork,
  type LeasePort,
  type RoundWork,
  type WorkGroup,
  type WorkLane,
} from '../../src/work/round.ts';
import { DueSchedule } from '../../src/work/schedule.ts';

/** The rows of platform.work_leases, shared by the fake holders below. */
type Table = Map<string, { owner: string | null; until: number }>;

/**
 * A lease port that keeps WorkLeases' rules (src/db/lease.ts) in memory: a key is claimed when no row says
 * otherwise, its lease expired, or (anyIdle) no one holds it; only its holder releases it.
 */
function fakeLeases(table: Table, owner: string, ttlMs = 60_000) {
  const calls = {
    claim: [] as { keys: string[]; nowMs: number; anyIdle: boolean }[],
    release: [] as { key: string; nextAtMs: number }[][],
    prune: [] as number[],
  };
  let failClaims = 0;
  let failPrunes = 0;
  const port: LeasePort = {
    async claim(keys, nowMs, options = {}) {
      calls.claim.push({ keys: [...keys], nowMs, anyIdle: options.anyIdle === true });
      if (failClaims > 0) {
        failClaims--;
        throw new Error('postgres unavailable');
      }
      const mine = new Set<string>();
      for (const key of keys) {
        const row = table.get(key);
        if (!row || row.until <= nowMs || (options.anyIdle === true && row.owner === null)) {
          table.set(key, { owner, until: nowMs + ttlMs });
          mine.add(key);
        }
      }
      return mine;
    },
    async release(entries) {
      calls.release.push(entries.map((e) => ({ ...e })));
      for (const e of entries)
        if (table.get(e.key)?.owner === owner) table.set(e.key, { owner: null, until: e.nextAtMs });
    },
    async prune(beforeMs) {
      calls.prune.push(beforeMs);
      if (failPrunes > 0) {
        failPrunes--;
        throw new Error('postgres unavailable');
      }
      let n = 0;
      for (const [key, row] of table)
        if (row.owner === null && row.until < beforeMs) {
          table.delete(key);
          n++;
        }
      return n;
    },
  };
  return {
    port,
    calls,
    failClaims: (n: number) => (failClaims = n),
    failPrunes: (n: number) => (failPrunes = n),
  };
}

const T0 = Date.parse('2026-12-01T12:00:00Z');
const INTERVAL = 1000;
const BACKOFF = { baseMs: 5000, maxMs: 20_000 };

/** A runner whose round works `groups()` once; the clock is `clock.t`. */
function runner<O>(
  groups: () => WorkGroup<string, O>[],
  options: { leases?: LeasePort; clock?: { t: number } } = {},
) {
  const clock = options.clock ?? { t: T0 };
  let rounds = 0;
  const r: RoundRunner<RoundWork<string, O>> = new RoundRunner({
    leases: options.leases,
    now: () => clock.t,
    round: async () => {
      rounds++;
      return r.work(groups());
    },
  });
  return { runner: r, clock, rounds: () => rounds };
}

const lane = (items: string[], schedule: DueSchedule, extra: Partial<WorkLane<string>> = {}) => ({
  items,
  key: (k: string) => k,
  schedule,
  ...extra,
});

const group = <O>(
  lanes: WorkLane<string>[],
  hands: GroupWork<string, O> | undefined,
  name = 'g',
): WorkGroup<string, O> => ({ name, lanes, open: async () => hands });

/** Work that answers: `ok` keys succeed (due again one interval later), the others fail (backed off). */
function answering(schedule: DueSchedule, clock: { t: number }, failing: ReadonlySet<string> = new Set()) {
  const worked: string[] = [];
  const hands: GroupWork<string, 'ok' | 'failed'> = {
    concurrency: 2,
    work: async (k) => {
      worked.push(k);
      if (failing.has(k)) {
        schedule.failed(k, clock.t, INTERVAL);
        return 'failed';
      }
      schedule.succeeded(k, clock.t, INTERVAL);
      return 'ok';
    },
  };
  return { hands, worked };
}

const released = (calls: { release: { key: string; nextAtMs: number }[][] }) =>
  Object.fromEntries(calls.release.flat().map((e) => [e.key, e.nextAtMs]));

describe('RoundRunner', () => {
  it('runs one round at a time: a round asked for while one runs joins it; the next starts fresh', async () => {
    let release!: () => void;
    let started = 0;
    const r = new RoundRunner({
      now: () => T0,
      round: async () => {
        started++;
        await new Promise<void>((resolve) => (release = resolve));
        return started;
      },
    });
    const a = r.round();
    const b = r.round();
    expect(b).toBe(a);
    expect(started).toBe(1);
    let settled = false;
    const s = r.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    release();
    expect(await a).toBe(1);
    await s;
    expect(settled).toBe(true);
    const c = r.round();
    expect(c).not.toBe(a);
    await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    expect(await c).toBe(2);
  });

  it('settled() resolves after a round that failed; the failure is the round’s caller’s', async () => {
    const r = new RoundRunner<number>({
      now: () => T0,
      round: async () => {
        throw new Error('listing failed');
      },
    });
    const round = r.round();
    await expect(r.settled()).resolves.toBeUndefined();
    await expect(round).rejects.toThrow('listing failed');
    // The failed round is over: the next one runs.
    await expect(r.round()).rejects.toThrow('listing failed');
  });

  it('claims only the due keys, works them, releases each at its next due time, prunes a day back', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const table: Table = new Map();
    const leases = fakeLeases(table, 'me');
    const clock = { t: T0 };
    const { hands, worked } = answering(schedule, clock);
    // b was answered a moment ago: due only one interval later.
    schedule.succeeded('b', T0 - 10, INTERVAL);
    const { runner: r } = runner(() => [group([lane(['a', 'b', 'c'], schedule)], hands)], {
      leases: leases.port,
      clock,
    });
    const round = await r.round();
    expect(leases.calls.claim).toEqual([{ keys: ['a', 'c'], nowMs: T0, anyIdle: false }]);
    expect(worked).toEqual(['a', 'c']);
    expect(round).toMatchObject({ due: 2, deferred: 0, leased: 0, failed: [], troubles: [] });
    expect(round.worked.map((w) => w.outcome)).toEqual(['ok', 'ok']);
    expect(released(leases.calls)).toEqual({ a: T0 + INTERVAL, c: T0 + INTERVAL });
    expect(table.get('a')).toEqual({ owner: null, until: T0 + INTERVAL });
    expect(leases.calls.prune).toEqual([T0 - 86_400_000]);
  });

  it('skips the keys another holder has, and claims them once their lease is given back', async () => {
    const table: Table = new Map();
    const other = fakeLeases(table, 'other');
    const mine = fakeLeases(table, 'me');
    const schedule = new DueSchedule(BACKOFF);
    const clock = { t: T0 };
    const { hands, worked } = answering(schedule, clock);
    await other.port.claim(['b'], T0);
    const { runner: r } = runner(() => [group([lane(['a', 'b', 'c'], schedule)], hands)], {
      leases: mine.port,
      clock,
    });
    const first = await r.round();
    expect(worked).toEqual(['a', 'c']);
    expect(first).toMatchObject({ due: 3, leased: 1, deferred: 0 });
    expect(released(mine.calls)).not.toHaveProperty('b');
    expect(table.get('b')?.owner).toBe('other');

    await other.port.release([{ key: 'b', nextAtMs: T0 + 500 }]);
    clock.t = T0 + 500;
    const second = await r.round();
    expect(worked).toEqual(['a', 'c', 'b']);
    expect(second).toMatchObject({ due: 1, leased: 0 });
  });

  it('releases a failing key after its backoff, doubling, and an answered one after its interval', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const leases = fakeLeases(new Map(), 'me');
    const clock = { t: T0 };
    const { hands } = answering(schedule, clock, new Set(['bad']));
    const { runner: r } = runner(() => [group([lane(['good', 'bad'], schedule)], hands)], {
      leases: leases.port,
      clock,
    });
    await r.round();
    expect(released(leases.calls)).toEqual({ good: T0 + INTERVAL, bad: T0 + 5000 });
    // At the next interval only the answered key is due; the failing one after its backoff, then doubled.
    clock.t = T0 + INTERVAL;
    leases.calls.release.length = 0;
    expect((await r.round()).due).toBe(1);
    clock.t = T0 + 5000;
    leases.calls.release.length = 0;
    await r.round();
    expect(released(leases.calls)).toEqual({ good: T0 + 5000 + INTERVAL, bad: T0 + 5000 + 10_000 });
  });

  it('a work item that throws does not stop the round: it is backed off and released, the rest are worked', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const leases = fakeLeases(new Map(), 'me');
    const clock = { t: T0 };
    const worked: string[] = [];
    const hands: GroupWork<string, string> = {
      concurrency: 1,
      work: async (k) => {
        if (k === 'b') throw new Error('boom');
        worked.push(k);
        schedule.succeeded(k, clock.t, INTERVAL);
        return k;
      },
    };
    const { runner: r } = runner(() => [group([lane(['a', 'b', 'c'], schedule)], hands)], {
      leases: leases.port,
      clock,
    });
    const round = await r.round();
    expect(worked).toEqual(['a', 'c']);
    expect(round.failed).toEqual([{ item: 'b', error: new Error('boom') }]);
    expect(schedule.failures('b')).toBe(1);
    expect(released(leases.calls)).toEqual({ a: T0 + INTERVAL, b: T0 + 5000, c: T0 + INTERVAL });
    expect(leases.calls.prune).toHaveLength(1);
  });

  it('keeps to the concurrency cap, in order', async () => {
    const schedule = new DueSchedule(BACKOFF);
    let inFlight = 0;
    let peak = 0;
    const started: string[] = [];
    const hands: GroupWork<string, void> = {
      concurrency: 3,
      work: async (k) => {
        started.push(k);
        peak = Math.max(peak, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
      },
    };
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const { runner: r } = runner(() => [group([lane(keys, schedule)], hands)]);
    const round = await r.round();
    expect(peak).toBe(3);
    expect(started).toEqual(keys);
    expect(round.worked).toHaveLength(10);
  });

  it('works the lanes of a group in order; an anyIdle lane claims whatever no one holds, released by its own time', async () => {
    const table: Table = new Map();
    const leases = fakeLeases(table, 'me');
    const regular = new DueSchedule(BACKOFF);
    const errors = new DueSchedule(BACKOFF);
    const clock = { t: T0 };
    // Released due an hour away, idle: a regular claim leaves it, an anyIdle one takes it.
    table.set('x', { owner: null, until: T0 + 3_600_000 });
    table.set('y', { owner: null, until: T0 + 3_600_000 });
    const order: string[] = [];
    const hands: GroupWork<string, void> = {
      concurrency: 1,
      work: async (k) => {
        order.push(k);
        regular.succeeded(k, clock.t, INTERVAL);
      },
    };
    const { runner: r } = runner(
      () => [
        group([lane(['x'], errors, { anyIdle: true, nextAt: () => 0 }), lane(['y', 'z'], regular)], hands),
      ],
      { leases: leases.port, clock },
    );
    const round = await r.round();
    expect(order).toEqual(['x', 'z']);
    expect(leases.calls.claim).toEqual([
      { keys: ['x'], nowMs: T0, anyIdle: true },
      { keys: ['y', 'z'], nowMs: T0, anyIdle: false },
    ]);
    expect(round).toMatchObject({ due: 3, leased: 1 });
    // x is released due at once (its lane keeps its time elsewhere), z one interval on.
    expect(released(leases.calls)).toEqual({ x: T0, z: T0 + INTERVAL });
  });

  it('a group not opened, or not admitted past its first items, leaves them for a later round', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const leases = fakeLeases(new Map(), 'me');
    const clock = { t: T0 };
    const { hands, worked } = answering(schedule, clock);
    let tokens = 2;
    const pausedUntil = T0 + 30_000;
    const { runner: r } = runner(
      () => [
        group([lane(['closed1', 'closed2'], schedule)], undefined, 'disabled'),
        group(
          [lane(['a', 'b', 'c', 'd'], schedule)],
          { ...hands, admit: () => tokens-- > 0, notBefore: () => pausedUntil },
          'limited',
        ),
      ],
      { leases: leases.port, clock },
    );
    const round = await r.round();
    expect(leases.calls.claim.map((c) => c.keys)).toEqual([['a', 'b', 'c', 'd']]);
    expect(worked).toEqual(['a', 'b']);
    expect(round).toMatchObject({ due: 6, deferred: 4, leased: 0 });
    // The refused ones go back at once, but not before the group's pause; so do the worked ones.
    expect(released(leases.calls)).toEqual({
      a: pausedUntil,
      b: pausedUntil,
      c: pausedUntil,
      d: pausedUntil,
    });
  });

  it('a claim Postgres does not answer defers that group; the others are worked; the trouble is reported', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const leases = fakeLeases(new Map(), 'me');
    const clock = { t: T0 };
    const { hands, worked } = answering(schedule, clock);
    leases.failClaims(1);
    leases.failPrunes(1);
    const { runner: r } = runner(
      () => [group([lane(['a'], schedule)], hands, 'first'), group([lane(['b'], schedule)], hands, 'second')],
      { leases: leases.port, clock },
    );
    const round = await r.round();
    expect(worked).toEqual(['b']);
    expect(round.deferred).toBe(1);
    expect(round.troubles.map((t) => [t.group, t.step])).toEqual([
      ['first', 'claim'],
      [undefined, 'prune'],
    ]);
  });

  it('with a commit, leases are held until it keeps the work; a failing commit stops the group and gives every lease back', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const table: Table = new Map();
    const leases = fakeLeases(table, 'me');
    const clock = { t: T0 };
    const pending: string[] = [];
    const kept: string[] = [];
    let failNext = false;
    const heldAtCommit: number[] = [];
    const hands: GroupWork<string, void> = {
      concurrency: 1,
      work: async (k) => {
        schedule.failed(k, clock.t, 0);
        pending.push(k);
      },
      commit: async (last) => {
        heldAtCommit.push([...table.values()].filter((row) => row.owner === 'me').length);
        if (!last && pending.length < 2) return false;
        if (failNext) {
          // Not kept: due again at once.
          for (const k of pending.splice(0)) schedule.forget(k);
          throw new Error('kafka unavailable');
        }
        kept.push(...pending.splice(0));
        return true;
      },
    };
    const { runner: r } = runner(() => [group([lane(['a', 'b', 'c', 'd', 'e'], schedule)], hands)], {
      leases: leases.port,
      clock,
    });
    const round = await r.round();
    expect(kept).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Released in batches after each commit that kept something: a, b | c, d | e.
    expect(leases.calls.release.map((batch) => batch.map((e) => e.key))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e'],
    ]);
    expect(heldAtCommit).toEqual([5, 5, 3, 3, 1, 1]);
    expect(round.troubles).toEqual([]);

    // The second round: the commit after b fails; c.. are not worked; every lease goes back, a and b due at once.
    clock.t = T0 + 3_600_000;
    failNext = true;
    leases.calls.release.length = 0;
    const failed = await r.round();
    expect(failed.troubles.map((t) => t.step)).toEqual(['commit']);
    expect(failed.worked.map((w) => w.item)).toEqual(['a', 'b']);
    expect(failed.deferred).toBe(3);
    expect([...table.values()].every((row) => row.owner === null)).toBe(true);
    expect(released(leases.calls)).toMatchObject({ a: clock.t, b: clock.t });
  });

  it('without leases every due key is this worker’s', async () => {
    const schedule = new DueSchedule(BACKOFF);
    const clock = { t: T0 };
    const { hands, worked } = answering(schedule, clock);
    schedule.succeeded('b', T0, INTERVAL);
    const { runner: r } = runner(() => [group([lane(['a', 'b', 'c'], schedule)], hands)], { clock });
    const round = await r.round();
    expect(worked).toEqual(['a', 'c']);
    expect(round).toMatchObject({ due: 2, leased: 0, deferred: 0, troubles: [] });
  });
});
