import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';

/**
 * Work leases in Postgres (platform.work_leases): several instances of a worker share one list of things to
 * do (swaps to poll, transactions to look up) and each thing is worked on by one instance at a time. A claim
 * is one upsert that takes only the rows no one holds and that are due: Postgres serialises concurrent
 * upserts of one key, so of two instances claiming the same key exactly one gets it. The holder releases
 * it with the time it is next due (one schedule for every instance); a holder that dies leaves its lease
 * to expire after `ttlMs`. Times are the caller's clock (a test clock in tests), as milliseconds.
 */
export class WorkLeases {
  readonly owner: string;

  constructor(
    private readonly pool: pg.Pool,
    readonly kind: string,
    private readonly ttlMs: number,
    owner?: string,
  ) {
    this.owner = owner ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  }

  /**
   * Claims the `keys` that no one holds and that are due at `nowMs` (with `anyIdle`: every key no one
   * holds, however far its next time); returns those claimed. Keys are claimed in sorted order, so two
   * claimers of overlapping sets cannot deadlock.
   */
  async claim(
    keys: readonly string[],
    nowMs: number,
    options: { anyIdle?: boolean } = {},
  ): Promise<Set<string>> {
    const sorted = [...new Set(keys)].sort();
    if (sorted.length === 0) return new Set();
    const r = await this.pool.query<{ key: string }>(
      `insert into platform.work_leases as l (kind, key, owner, lease_until)
       select $1, k, $3, $4::timestamptz from unnest($2::text[]) as k
       on conflict (kind, key) do update set owner = excluded.owner, lease_until = excluded.lease_until
         where l.lease_until <= $5::timestamptz or ($6 and l.owner is null)
       returning l.key`,
      [
        this.kind,
        sorted,
        this.owner,
        new Date(nowMs + this.ttlMs),
        new Date(nowMs),
        options.anyIdle === true,
      ],
    );
    return new Set(r.rows.map((row) => row.key));
  }

  /** Gives back this instance's leases, each due again at its `nextAtMs` (a lease taken over meanwhile is left). */
  async release(entries: readonly { key: string; nextAtMs: number }[]): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `update platform.work_leases l set owner = null, lease_until = t.until
       from unnest($2::text[], $3::timestamptz[]) as t(key, until)
       where l.kind = $1 and l.key = t.key and l.owner = $4`,
      [this.kind, entries.map((e) => e.key), entries.map((e) => new Date(e.nextAtMs)), this.owner],
    );
  }

  /** Deletes idle rows due before `beforeMs` (a missing row is due at once: nothing is lost). */
  async prune(beforeMs: number): Promise<number> {
    const r = await this.pool.query(
      `delete from platform.work_leases where kind = $1 and owner is null and lease_until < $2`,
      [this.kind, new Date(beforeMs)],
    );
    return r.rowCount ?? 0;
  }
}
