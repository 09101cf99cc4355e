import type { DueSchedule } from './schedule.ts';

/**
 * The engine of the scheduled workers (the poller's regular and confirming polls, the chain watcher): rounds
 * of leased work. A round lists its candidate keys (the worker's own read), and the runner keeps those due by
 * their DueSchedule, claims them through the work leases, works them with a concurrency cap, releases each
 * with its next due time, and prunes old leases; one round runs at a time. Pure: the leases are a port (the
 * shape of WorkLeases, src/db/lease.ts) and the clock is passed in.
 */

/** The work leases a round needs; WorkLeases (src/db/lease.ts) has this shape. */
export interface LeasePort {
  /** The keys claimed: no one held them and they were due (with anyIdle: whenever no one held them). */
  claim(keys: readonly string[], nowMs: number, options?: { anyIdle?: boolean }): Promise<Set<string>>;
  release(entries: readonly { key: string; nextAtMs: number }[]): Promise<void>;
  prune(beforeMs: number): Promise<unknown>;
}

/** One kind of work in a group: its listed items and the schedule that says which are due. */
export interface WorkLane<T> {
  readonly items: readonly T[];
  readonly key: (item: T) => string;
  readonly schedule: DueSchedule;
  /**
   * Claimed whenever no one holds the key, however far its shared due time: the lane keeps its due times
   * elsewhere (a confirming poll's are in Postgres).
   */
  readonly anyIdle?: boolean;
  /** When a released key is due again by this lane (default: its schedule's next time). */
  readonly nextAt?: (key: string) => number;
}

/** How an opened group is worked. */
export interface GroupWork<T, O> {
  /** Items worked at once. */
  readonly concurrency: number;
  /** Asked in turn before each claimed item is started (a rate limit, a pause); false: it and the rest wait. */
  admit?(): boolean;
  /** No lease is released due sooner than this (a provider's pause). */
  notBefore?(): number;
  /** Records its own success or failure in its lane's schedule (it knows the interval); a throw is a failure. */
  work(item: T): Promise<O>;
  /**
   * With it, leases are held until a commit (the chain watcher's append) instead of released as each item
   * ends: called after each item (`last` false) and once after the group's last (`last` true); true: what
   * has ended so far is kept, its leases go back. A throw stops the group; its leases go back all the same.
   */
  commit?(last: boolean): Promise<boolean>;
}

/** A group of lanes worked together (a provider's polls, a chain source's lookups). */
export interface WorkGroup<T, O> {
  /** Names the group in the round's troubles (a provider, a source). */
  readonly name: string;
  /** Worked in this order: every claimed item of the first lane starts before the next lane's. */
  readonly lanes: readonly WorkLane<T>[];
  /** Opened in turn, after the previous group's work started; undefined: its due items wait for a later round. */
  open(): Promise<GroupWork<T, O> | undefined>;
}

/** What went wrong with the leases or a commit; the round went on without it. */
export interface RoundTrouble {
  readonly group: string | undefined;
  readonly step: 'claim' | 'release' | 'commit' | 'prune';
  readonly error: unknown;
}

export interface RoundWork<T, O> {
  /** Items due by their schedules. */
  due: number;
  /** Due, left for a later round: a group not opened, a claim Postgres did not answer, an item not admitted. */
  deferred: number;
  /** Due here, but another holder has their lease: not worked. */
  leased: number;
  worked: { item: T; outcome: O }[];
  /** Work that threw: counted as a failure in its lane's schedule. */
  failed: { item: T; error: unknown }[];
  troubles: RoundTrouble[];
}

interface Claimed<T> {
  readonly item: T;
  readonly key: string;
  readonly lane: WorkLane<T>;
}

/** Idle lease rows due longer ago than this are pruned: a missing row says the same. */
const PRUNE_AFTER_MS = 86_400_000;

export class RoundRunner<R> {
  private running: Promise<R> | undefined;

  constructor(
    private readonly options: {
      /** Without: this worker is alone, every due key is its own. */
      readonly leases?: LeasePort | undefined;
      readonly now: () => number;
      /** One round's body: lists the candidates and works them (work()). */
      readonly round: () => Promise<R>;
    },
  ) {}

  /** One round; a round still under way is joined, never overlapped. */
  round(): Promise<R> {
    this.running ??= this.options.round().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Resolves once the round under way (if any) has ended. */
  async settled(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /**
   * Works the groups: each opened in turn, its due items claimed, then worked while the next group opens;
   * resolves when every group's work has ended and old leases are pruned.
   */
  async work<T, O>(groups: readonly WorkGroup<T, O>[]): Promise<RoundWork<T, O>> {
    const result: RoundWork<T, O> = { due: 0, deferred: 0, leased: 0, worked: [], failed: [], troubles: [] };
    const working: Promise<void>[] = [];
    for (const group of groups) {
      const hands = await group.open();
      const now = this.options.now();
      const due = group.lanes.map((lane) =>
        lane.items
          .map((item) => ({ item, key: lane.key(item), lane }))
          .filter((c) => lane.schedule.due(c.key, now)),
      );
      const count = due.reduce((n, d) => n + d.length, 0);
      result.due += count;
      if (!hands) {
        result.deferred += count;
        continue;
      }
      const mine = await this.claim(group.name, due, now, result);
      if (!mine) {
        result.deferred += count;
        continue;
      }
      result.leased += count - mine.length;
      let admitted = 0;
      while (admitted < mine.length && (hands.admit?.() ?? true)) admitted++;
      working.push(this.workGroup(group.name, hands, mine.slice(0, admitted), result));
      if (admitted < mine.length) {
        result.deferred += mine.length - admitted;
        await this.release(group.name, hands, mine.slice(admitted), result);
      }
    }
    await Promise.all(working);
    await this.options.leases
      ?.prune(this.options.now() - PRUNE_AFTER_MS)
      .catch((error: unknown) => result.troubles.push({ group: undefined, step: 'prune', error }));
    return result;
  }

  /** The due items this worker claimed, in lane order; undefined: the claim failed, nothing is worked. */
  private async claim<T>(
    group: string,
    due: Claimed<T>[][],
    now: number,
    result: RoundWork<T, unknown>,
  ): Promise<Claimed<T>[] | undefined> {
    const leases = this.options.leases;
    if (!leases) return due.flat();
    try {
      const claimed = await Promise.all(
        due.map((d) => {
          const keys = d.map((c) => c.key);
          if (keys.length === 0) return new Set<string>();
          return d[0]!.lane.anyIdle ? leases.claim(keys, now, { anyIdle: true }) : leases.claim(keys, now);
        }),
      );
      return due.flatMap((d, i) => d.filter((c) => claimed[i]!.has(c.key)));
    } catch (error) {
      result.troubles.push({ group, step: 'claim', error });
      return undefined;
    }
  }

  private async workGroup<T, O>(
    group: string,
    hands: GroupWork<T, O>,
    items: Claimed<T>[],
    result: RoundWork<T, O>,
  ): Promise<void> {
    const held = new Set(items);
    /** Ended, their leases held until the next commit. */
    const ended: Claimed<T>[] = [];
    let next = 0;
    let stopped = false;
    const giveBack = async (batch: Claimed<T>[]) => {
      for (const c of batch) held.delete(c);
      await this.release(group, hands, batch, result);
    };
    const commit = async (last: boolean) => {
      try {
        if (await hands.commit!(last)) await giveBack(ended.splice(0));
      } catch (error) {
        stopped = true;
        result.troubles.push({ group, step: 'commit', error });
      }
    };
    const one = async (c: Claimed<T>) => {
      try {
        result.worked.push({ item: c.item, outcome: await hands.work(c.item) });
      } catch (error) {
        c.lane.schedule.failed(c.key, this.options.now(), 0);
        result.failed.push({ item: c.item, error });
      }
      if (!hands.commit) return giveBack([c]);
      ended.push(c);
      await commit(false);
    };
    const hand = async () => {
      while (!stopped && next < items.length) await one(items[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(Math.max(1, hands.concurrency), items.length) }, hand));
    if (hands.commit && !stopped) await commit(true);
    // A stopped group's rest was not worked: it waits for a later round, due as it was.
    result.deferred += items.length - next;
    if (held.size > 0) await giveBack([...held]);
  }

  /** Gives leases back, each due again at its lane's next time; a failure lets them expire. */
  private async release<T>(
    group: string,
    hands: GroupWork<T, unknown>,
    batch: readonly Claimed<T>[],
    result: RoundWork<T, unknown>,
  ): Promise<void> {
    const leases = this.options.leases;
    if (!leases || batch.length === 0) return;
    const notBefore = hands.notBefore?.() ?? 0;
    const now = this.options.now();
    await leases
      .release(
        batch.map((c) => ({
          key: c.key,
          nextAtMs: Math.max(c.lane.nextAt?.(c.key) ?? c.lane.schedule.nextAt(c.key), notBefore, now),
        })),
      )
      .catch((error: unknown) => result.troubles.push({ group, step: 'release', error }));
  }
}
