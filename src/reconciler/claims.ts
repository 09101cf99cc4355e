import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../observability/log.ts';

/**
 * Who judges which swap. Several reconcilers share the queue: a round claims its rows in a short transaction
 * under an advisory lock (one row of platform.reconciliation_claims), and the claim keeps the others off them
 * until their verdicts are folded (the queue rows go) or its time is up. Within a process, the in-flight set
 * keeps its two lanes apart the same way. Rounds under a backlog walk the queue as a pass.
 */

/** How long a verdict appended but not yet folded keeps its swap from being taken again (holdMs). */
export const IN_FLIGHT_MS = 60_000;

/** A claim this long past its time is nobody's: the sweep deletes it (its claimer stopped or died). */
const STALE_CLAIM = '1 hour';

/** Rounds and sweeps claim one at a time, across reconcilers of the same projection schema. */
const CLAIM_LOCK = `select pg_advisory_xact_lock(hashtext('swap-ledger:reconcile:' || current_schema()))`;

/**
 * How long a pass over the queue goes on from where its last round stopped before it starts again at the
 * head, where rows it passed by wait: deferred ones (awaiting their confirming poll), failed ones, rows
 * another reconciler held. A pass also ends when a round comes back short.
 */
const PASS_MS = 5_000;

/** A verdict appended but perhaps not folded yet: until when it keeps its row, and the row's queue time. */
interface InFlight {
  until: number;
  /** queued_at in microseconds since the epoch (exact, unlike a JS Date). */
  queuedUs: bigint;
}

/** Where a pass over the queue stands: after this row, in the queue's order (queued_at, provider, swap). */
interface Pass {
  startedAt: number;
  queuedUs: bigint;
  providerId: string;
  swapId: string;
}

/** A queue row a round claimed. */
export interface ClaimedRow {
  provider_id: string;
  swap_id: string;
  queued_by_event_id: string;
  queued_us: string;
  trace_parent: string | null;
}

/** A round's claim: its id and the rows it took (by the event each verdict is to be based on). */
export interface Round {
  readonly id: string;
  readonly rows: readonly ClaimedRow[];
}

/** A sweep's claim: final swaps with no verdict and no queue row, by the event their verdict is based on. */
export interface Sweep {
  readonly id: string;
  readonly missed: readonly { provider_id: string; swap_id: string; based_on: string }[];
}

/**
 * The queue rows a round may take, oldest first, after the pass's place: not judged on their event yet, not
 * in this reconciler's in-flight set ($3), not claimed by another ($7), and not a swap made final by webhook
 * still awaiting its confirming poll (platform.poll_confirmations), at most confirmWaitMs ($2).
 */
const ROUND_ROWS = `select q.provider_id, q.swap_id, q.queued_by_event_id, q.trace_parent,
        (extract(epoch from q.queued_at) * 1000000)::bigint as queued_us
 from reconciliation_queue q
 join swaps s on s.provider_id = q.provider_id and s.swap_id = q.swap_id
 where q.queued_by_event_id <> all($3::uuid[])
   and ($4::bigint is null
        or (q.queued_at, q.provider_id, q.swap_id)
           > (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::text, $6::text))
   and not exists (select 1 from reconciliations r
                   where r.provider_id = q.provider_id and r.swap_id = q.swap_id
                     and r.based_on_event_id = q.queued_by_event_id)
   and q.queued_by_event_id not in
       (select e.id from platform.reconciliation_claims c
        cross join unnest(c.queued_by_event_ids) as e(id)
        where c.claimed_until > now() and c.claimed_by <> $7)
   and not (s.final and s.final_at > now() - make_interval(secs => $2::double precision / 1000)
            and exists (select 1 from event_journal j
                        where j.provider_id = s.provider_id and j.swap_id = s.swap_id
                          and j.event_type = 'StatusReported' and j.outcome = 'applied'
                          and j.source = 'webhook' and j.changes ? 'final')
            and not exists (select 1 from platform.poll_confirmations c
                            where c.provider_id = s.provider_id and c.swap_id = s.swap_id))
 order by q.queued_at, q.provider_id, q.swap_id limit $1`;

/**
 * What the sweep judges, not claimed by anyone (this reconciler included) and not queued: final swaps with no
 * verdict, swaps whose confirmation the poller gave up on after their verdict (judged again on the same
 * event: their missing figures are now "never reported", and nothing else would queue them), and swaps whose
 * chain check passed on a transfer that an earlier claim (by event id) of another swap holds: that claim was
 * folded after their verdict (its partition lagged), and one transfer evidences one claim.
 */
const MISSED_ROWS = `select provider_id, swap_id, based_on from (
   select s.provider_id, s.swap_id, coalesce(s.last_correction_event_id, s.last_event_id) as based_on, s.final_at
   from swaps s
   where s.final
     and not exists (select 1 from reconciliations r
                     where r.provider_id = s.provider_id and r.swap_id = s.swap_id)
   union all
   select r.provider_id, r.swap_id, r.based_on_event_id, s.final_at
   from reconciliations r
   join swaps s on s.provider_id = r.provider_id and s.swap_id = r.swap_id
   join platform.confirmations_never_reported n on n.provider_id = r.provider_id and n.swap_id = r.swap_id
   where n.abandoned_at > r.reconciled_at
   union all
   select r.provider_id, r.swap_id, r.based_on_event_id, s.final_at
   from reconciliations r
   join swaps s on s.provider_id = r.provider_id and s.swap_id = r.swap_id
   where exists (select 1 from chain_claims mine
                 join chain_claims earlier on earlier.chain = mine.chain and earlier.txid = mine.txid
                      and earlier.transfer = mine.transfer and earlier.event_id < mine.event_id
                      and (earlier.provider_id, earlier.swap_id) <> (mine.provider_id, mine.swap_id)
                 where mine.provider_id = r.provider_id and mine.swap_id = r.swap_id
                   and exists (select 1 from jsonb_array_elements(r.checks) c
                               where c->>'name' = 'chain.' || mine.role and c->>'verdict' <> 'MISMATCH'))
 ) m
 where not exists (select 1 from reconciliation_queue q
                   where q.provider_id = m.provider_id and q.swap_id = m.swap_id)
   and m.based_on not in
       (select e.id from platform.reconciliation_claims c
        cross join unnest(c.queued_by_event_ids) as e(id) where c.claimed_until > now())
 order by m.final_at limit $1`;

export class Claims {
  /** Verdicts appended but perhaps not folded yet, by the queue row's event id: not taken again meanwhile. */
  private readonly inFlight = new Map<string, InFlight>();
  /** This reconciler's claims (rounds) and their swaps still in flight. */
  private readonly rounds = new Map<string, Set<string>>();
  /**
   * Rounds under a backlog go on after the previous round's last row instead of walking the queue from its
   * head past every row in flight each time: under a backlog that walk and the in-flight set's upkeep grew
   * with the rows in flight and dominated a round.
   */
  private pass: Pass | undefined;
  private forgotAt = 0;
  /** Who this reconciler is in its claims: host, process and instance. */
  private readonly claimant = `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly projection: pg.Pool,
    private readonly logger: Logger,
    private readonly holdMs: number,
  ) {}

  /**
   * Claims the next round of at most `batchSize` queue rows on `client`, in a transaction of its own (its
   * failure claims nothing): at the head of the queue the in-flight set is pruned first; within a pass only
   * its rows at or after the pass's place can lie ahead (those before it were passed by).
   */
  async takeRound(client: pg.PoolClient, batchSize: number, confirmWaitMs: number): Promise<Round> {
    const id = randomUUID();
    const now = Date.now();
    const pass = this.pass && now - this.pass.startedAt < PASS_MS ? this.pass : undefined;
    if (!pass) {
      this.pass = undefined;
      await this.forgetFolded(client);
    }
    let taken: string[] = [];
    try {
      await client.query('begin');
      // Rounds claim one at a time, across reconcilers (a short transaction: the claim, not the judging), so
      // that this select sees every claim committed before it.
      await client.query(CLAIM_LOCK);
      // Read once the lock is held: the other lane's last claim is in the set by then.
      const excluded: string[] = [];
      for (const [eventId, f] of this.inFlight)
        if (!pass || f.queuedUs >= pass.queuedUs) excluded.push(eventId);
      const rows = await client.query<ClaimedRow>(ROUND_ROWS, [
        batchSize,
        confirmWaitMs,
        excluded,
        pass?.queuedUs.toString() ?? null,
        pass?.providerId ?? null,
        pass?.swapId ?? null,
        this.claimant,
      ]);
      this.advancePass(rows.rows, batchSize, now);
      // Claimed at once, not once judged: the claim keeps other reconcilers off these rows, the in-flight set
      // this one's other lane. A row the other lane took while this select ran is skipped.
      const mine = rows.rows.filter((r) => !this.inFlight.has(r.queued_by_event_id));
      taken = mine.map((r) => r.queued_by_event_id);
      await this.claim(client, id, taken);
      for (const r of mine) this.hold(r);
      if (taken.length > 0) this.rounds.set(id, new Set(taken));
      await client.query('commit');
      return { id, rows: mine };
    } catch (e) {
      await client.query('rollback').catch(() => {});
      this.pass = undefined;
      for (const eventId of taken) this.inFlight.delete(eventId);
      this.rounds.delete(id);
      throw e;
    }
  }

  /** The next round goes on after this one's last row; a short round ends the pass (the queue's end). */
  private advancePass(rows: readonly ClaimedRow[], batchSize: number, now: number): void {
    const last = rows.at(-1);
    if (rows.length < batchSize || !last) {
      this.pass = undefined;
      return;
    }
    const at = { queuedUs: BigInt(last.queued_us), providerId: last.provider_id, swapId: last.swap_id };
    // Two lanes: the pass stands at the further of their places (their rounds take disjoint rows).
    const behind = this.pass && this.pass.queuedUs > at.queuedUs;
    if (!behind) this.pass = { startedAt: this.pass?.startedAt ?? now, ...at };
  }

  /** The round failed after its claim: the next round starts at the head. */
  endPass(): void {
    this.pass = undefined;
  }

  /** Holds a claimed row (again, once its verdict is appended: the wait for the projector starts then). */
  hold(row: Pick<ClaimedRow, 'queued_by_event_id' | 'queued_us'>): void {
    this.inFlight.set(row.queued_by_event_id, {
      until: Date.now() + this.holdMs,
      queuedUs: BigInt(row.queued_us),
    });
  }

  /**
   * A round ended: what failed is taken again when the next pass reaches it (by any reconciler: its claim
   * goes); what was appended waits for the projector.
   */
  async release(round: Round, judged: ReadonlySet<string>): Promise<void> {
    const failed = round.rows.map((r) => r.queued_by_event_id).filter((eventId) => !judged.has(eventId));
    for (const eventId of failed) this.inFlight.delete(eventId);
    if (failed.length > 0) await this.unclaim(round.id, failed);
  }

  /**
   * Claims up to `limit` final swaps that have no verdict and are not queued, like a round's, by the event
   * their verdict is based on, so that two reconcilers' sweeps judge each once. A sweep's claim is left to
   * expire.
   */
  async takeMissed(limit: number): Promise<Sweep> {
    const id = randomUUID();
    const client = await this.projection.connect();
    try {
      await client.query('begin');
      await client.query(CLAIM_LOCK);
      const missed = (
        await client.query<{ provider_id: string; swap_id: string; based_on: string }>(MISSED_ROWS, [limit])
      ).rows;
      await this.claim(
        client,
        id,
        missed.map((m) => m.based_on),
      );
      await client.query('commit');
      return { id, missed };
    } catch (e) {
      await client.query('rollback').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  /**
   * Drops from the in-flight set the verdicts the projector has folded (their queue row is gone, or
   * judged) and those older than holdMs (appended, yet never folded: taken again), so that the set stays
   * about one projector lag long; a round's claim goes once none of its swaps is in flight.
   */
  private async forgetFolded(client: pg.PoolClient): Promise<void> {
    const now = Date.now();
    // At most a few times a second: under a backlog the rounds follow one another at once.
    if (this.inFlight.size === 0 || now - this.forgotAt < 250) return;
    this.forgotAt = now;
    for (const [eventId, f] of this.inFlight) if (f.until <= now) this.inFlight.delete(eventId);
    const asked = [...this.inFlight.keys()];
    const waiting = await client.query<{ queued_by_event_id: string }>(
      `select q.queued_by_event_id from reconciliation_queue q
       where q.queued_by_event_id = any($1::uuid[])
         and not exists (select 1 from reconciliations r
                         where r.provider_id = q.provider_id and r.swap_id = q.swap_id
                           and r.based_on_event_id = q.queued_by_event_id)`,
      [asked],
    );
    const still = new Set(waiting.rows.map((r) => r.queued_by_event_id));
    // Only what was asked about: a concurrent round may have added verdicts meanwhile.
    for (const eventId of asked) if (!still.has(eventId)) this.inFlight.delete(eventId);
    const ended: string[] = [];
    for (const [round, ids] of this.rounds) {
      for (const eventId of ids) if (!this.inFlight.has(eventId)) ids.delete(eventId);
      if (ids.size === 0) {
        this.rounds.delete(round);
        ended.push(round);
      }
    }
    if (ended.length > 0)
      await client
        .query(`delete from platform.reconciliation_claims where round_id = any($1::uuid[])`, [ended])
        // A claim left behind keeps others off its rows only until its time is up.
        .catch((e: Error) => this.logger.warn({ err: e }, 'reconciliation claims not deleted'));
  }

  /** Claims a round's swaps by the events their verdicts are based on (in the claiming transaction). */
  private async claim(client: pg.PoolClient, round: string, basedOn: readonly string[]): Promise<void> {
    if (basedOn.length === 0) return;
    await client.query(
      `insert into platform.reconciliation_claims (round_id, claimed_by, claimed_until, queued_by_event_ids)
       values ($1, $2, now() + make_interval(secs => $3::double precision / 1000), $4::uuid[])`,
      [round, this.claimant, this.holdMs, basedOn],
    );
  }

  /** Takes failed swaps out of their round's claim, so that any reconciler may take them at once. */
  async unclaim(round: string, failed: readonly string[]): Promise<void> {
    const ids = this.rounds.get(round);
    for (const eventId of failed) ids?.delete(eventId);
    // A queue round with nothing left in flight goes whole; otherwise (or a sweep's) only the failed leave it.
    const whole = ids !== undefined && ids.size === 0;
    if (whole) this.rounds.delete(round);
    await this.projection
      .query(
        whole
          ? `delete from platform.reconciliation_claims where round_id = $1`
          : `update platform.reconciliation_claims
             set queued_by_event_ids = array(select unnest(queued_by_event_ids) except select unnest($2::uuid[]))
             where round_id = $1`,
        whole ? [round] : [round, failed],
      )
      .catch((e: Error) => this.logger.warn({ err: e }, 'reconciliation claims not released'));
  }

  /** Deletes claims long past their time (their reconciler stopped or died before deleting them). */
  async forgetStaleClaims(): Promise<number> {
    const r = await this.projection.query(
      `delete from platform.reconciliation_claims where claimed_until < now() - interval '${STALE_CLAIM}'`,
    );
    return r.rowCount ?? 0;
  }
}
