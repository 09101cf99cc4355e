/**
 * The ordering rules of the outbox, as pure functions (the SQL around them only gathers their inputs).
 *
 * Events of one aggregate key must reach Kafka in the order they were recorded: the projector rejects
 * a StatusReported whose SwapCreated it has not seen yet. Two rules keep that order:
 *   1. an event whose key still has unpublished outbox rows goes to the outbox behind them, never
 *      straight to Kafka (and so does every later event of that key in the same batch);
 *   2. a relay publishes, per key, only an unbroken run of that key's unpublished rows starting at the
 *      oldest one: a row whose predecessor is held by another transaction (SKIP LOCKED hides it) waits.
 */

/** Rule 1: for each event (in order), whether it must go to the outbox rather than straight to Kafka. */
export function mustQueue(keys: readonly string[], keysWithPendingRows: ReadonlySet<string>): boolean[] {
  const queued = new Set<string>();
  return keys.map((key) => {
    if (keysWithPendingRows.has(key) || queued.has(key)) {
      queued.add(key);
      return true;
    }
    return false;
  });
}

export interface LockedRow {
  readonly seq: bigint;
  readonly key: string;
}

/**
 * Rule 2. `locked`: the rows this relay holds (FOR UPDATE SKIP LOCKED); `pendingByKey`: every
 * unpublished row of those keys as the database shows them (locked by anyone or not), seq ascending.
 * Returns the seqs this relay may publish now, ascending: per key, the longest prefix of the key's
 * pending rows that it holds. Rows after a gap (a row it does not hold) wait for the next round.
 */
export function publishableSeqs(
  locked: readonly LockedRow[],
  pendingByKey: ReadonlyMap<string, readonly bigint[]>,
): bigint[] {
  const held = new Map<string, Set<bigint>>();
  for (const row of locked) {
    let set = held.get(row.key);
    if (!set) held.set(row.key, (set = new Set()));
    set.add(row.seq);
  }
  const out: bigint[] = [];
  for (const [key, mine] of held) {
    const pending = [...(pendingByKey.get(key) ?? [])].sort(compareBigint);
    for (const seq of pending) {
      if (!mine.has(seq)) break; // an older row of this key is not ours (locked elsewhere): wait behind it
      out.push(seq);
    }
  }
  return out.sort(compareBigint);
}

export function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
