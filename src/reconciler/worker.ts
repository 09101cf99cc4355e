import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import cron, { type ScheduledTask } from 'node-cron';
import type avro from 'avsc';
import { envelopeType } from '../events/codec.ts';
import type { EventAppender } from '../events/producer.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import type { Logger } from '../observability/log.ts';
import type { MetricsRegistry, Counter } from '../observability/metrics.ts';
import { contextFromTraceParent, SpanKind, withSpan } from '../observability/tracing.ts';
import { readProviderSetup, type ProviderSetup } from '../providers/reads.ts';
import { JudgePool } from './judge-pool.ts';
import {
  failingChecks,
  judgeChunk,
  judgeSwap,
  type JudgeChunk,
  type JudgedOutcome,
  type JudgedRow,
  type JudgedSwap,
  type JudgeSetup,
  type SwapToJudge,
} from './judging.ts';
import type { ReconciliationPolicy } from './policy.ts';
import type { ReconciledCheck, Verdict } from './types.ts';

export interface ReconcilerOptions {
  /** search_path = the live projection schema. */
  projection: pg.Pool;
  /** Any pool of the same database: the provider registry (keys) lives in schema `platform`. */
  platform: pg.Pool;
  appender: EventAppender;
  policy: ReconciliationPolicy;
  logger: Logger;
  metrics?: MetricsRegistry;
  /** Swaps taken from the queue per round (default 500): judged together, their verdicts appended together. */
  batchSize?: number;
  /**
   * A swap made final by webhook is judged only after its confirming poll (the webhook carries no payout
   * network fee), or once it has waited this long: deferred, never judged UNVERIFIABLE for good.
   */
  confirmWaitMs?: number;
  /**
   * Threads that judge and encode the verdicts of queue rounds and sweeps beside the event loop (default 0:
   * judged on it).
   * One already takes ~2/3 of a swap's CPU off the loop; `reconciler run` takes RECONCILER_JUDGE_THREADS.
   */
  judgeThreads?: number;
  /**
   * How long a judged swap stays claimed, so that neither this reconciler nor another takes it again
   * before its verdict is folded (default 60 s; then it is taken again, as appended yet never folded).
   */
  holdMs?: number;
  /** Called after each verdict is appended (metrics). */
  onVerdict?: (v: RecordedVerdict) => void;
}

/** A swap's checks and its verdict event, appended or not yet (`check`, then `record`). */
export interface SwapReconciliation extends JudgedSwap {
  /** When the swap became final, ms since the epoch (the verdict's latency metric), if known. */
  finalAtMs: number | null;
}

/** A verdict appended: what its metric, its log line and onVerdict see. */
export interface RecordedVerdict {
  swapId: string;
  providerId: string;
  basedOnEventId: string;
  verdict: Verdict;
  /** The checks that did not pass (MISMATCH, UNVERIFIABLE). */
  failing: ReconciledCheck[];
  eventId: string;
  occurredAt: string;
  /** When the swap became final, ms since the epoch (times come from Postgres as text). */
  finalAtMs: number | null;
}

/** How long a verdict appended but not yet folded keeps its swap from being taken again (holdMs). */
const IN_FLIGHT_MS = 60_000;

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

/** What the checks of one swap read, and when it became final. */
interface LoadedSwap extends SwapToJudge {
  readonly finalAtMs: number | null;
}

/** A swap's verdict judged and encoded, ready to append. */
type EncodedVerdict = Extract<JudgedOutcome, { ok: true }> & { value: Buffer };

/**
 * A query of `table`'s rows for each swap of the keys $1 (providers) and $2 (swap ids): one index probe per
 * swap, whatever the statistics say. The subquery's `offset 0` keeps the planner from pulling it up into
 * an ordinary join, which it then planned as a hash join over the whole table (a round of 500 over 22,000
 * swaps: 25-30 ms of Postgres instead of ~3) or, on a table filled seconds before and never analyzed, as
 * a nested loop that scanned the table once per key (170-236 ms a round).
 */
export function perSwapLookup(select: string, table: string, where = ''): string {
  return `select t.* from unnest($1::text[], $2::text[]) as k(provider_id, swap_id)
       cross join lateral (select ${select} from ${table} x
                           where x.provider_id = k.provider_id and x.swap_id = k.swap_id ${where}
                           offset 0) t`;
}

export class ReconcileError extends Error {
  override name = 'ReconcileError';
}

/**
 * Takes final (or corrected) swaps from the reconciliation queue that the projector fills in the
 * transaction that made them final, checks them, and appends SwapReconciled. The queue is committed
 * state, so the reconciler never races the projector. Several reconcilers share the queue: a round claims
 * its rows (platform.reconciliation_claims) in a short transaction under an advisory lock, and the claim
 * keeps the others off them until their verdicts are folded (the queue rows go) or its time is up. Within a
 * process, its in-flight set does the same for its two lanes.
 */
export class Reconciler {
  private readonly verdicts: Counter | undefined;
  private readonly threadsLost: Counter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweep: ScheduledTask | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopping = false;
  private forgotAt = 0;
  /** Verdicts appended but perhaps not folded yet, by the queue row's event id: not taken again meanwhile. */
  private readonly inFlight = new Map<string, InFlight>();
  /** This reconciler's claims (rounds) and their swaps still in flight. */
  private readonly rounds = new Map<string, Set<string>>();
  /**
   * Rounds under a backlog go on after the previous round's last row instead of walking the queue from its
   * head past every row in flight each time (with 20,000 in flight, that walk and the in-flight set's
   * upkeep were ~40% of a round).
   */
  private pass: Pass | undefined;
  private pool: JudgePool | undefined;
  private envelope: avro.Type | undefined;

  /** Who this reconciler is in its claims: host, process and instance. */
  private readonly claimant = `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

  private get holdMs(): number {
    return this.options.holdMs ?? IN_FLIGHT_MS;
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  /** The projection this reconciler reads (search_path = the live schema). */
  get projection(): pg.Pool {
    return this.options.projection;
  }

  constructor(private readonly options: ReconcilerOptions) {
    this.verdicts = options.metrics?.counter(
      'swap_ledger_reconciliation_verdicts_total',
      'Swaps reconciled, by provider and verdict',
      ['provider', 'verdict'],
    );
    this.threadsLost = options.metrics?.counter(
      'swap_ledger_reconciler_judge_threads_lost_total',
      'Judge threads that died or exited (their swaps stay queued; a new thread judges the next round)',
    );
  }

  /** Checks one swap against its signed payload; appends nothing. */
  async check(ref: SwapRef, basedOnEventId?: string): Promise<SwapReconciliation> {
    const loaded = (await this.loadSwaps([ref])).get(formatSwapRef(ref))!;
    if (loaded instanceof ReconcileError) throw loaded;
    return this.judge({ ...loaded, basedOnEventId: basedOnEventId ?? loaded.basedOnEventId });
  }

  /**
   * What the checks of several swaps read, in three queries whatever their number (the swaps rows, their
   * applied SwapCreated, their status conflicts) and one read of each provider's keys: a swap that cannot
   * be checked is a ReconcileError of its own, never the batch's.
   */
  private async loadSwaps(
    refs: readonly SwapRef[],
    projection: pg.Pool | pg.PoolClient = this.options.projection,
  ): Promise<Map<string, LoadedSwap | ReconcileError>> {
    const { platform } = this.options;
    const keys = [refs.map((r) => r.providerId), refs.map((r) => r.swapId)];
    // The columns the checks read, not the row's forty-odd.
    const swaps = await projection.query(
      perSwapLookup(
        `x.provider_id, x.swap_id, x.status, x.status_class, x.extra_fees, x.final,
         extract(epoch from x.final_at) * 1000 as final_at_ms,
         x.last_event_id, x.last_correction_event_id,
         x.amount_to, x.provider_fees, x.referral_fees, x.payout_network_fees, x.payin_transaction_id,
         x.payout_transaction_id, x.refund_transaction_id`,
        'swaps',
      ),
      keys,
    );
    // As text: parsed where it is judged (a judge thread), not on the event loop.
    const created = await projection.query<{ provider_id: string; swap_id: string; payload: string }>(
      perSwapLookup(
        'x.provider_id, x.swap_id, x.payload::text as payload',
        'event_journal',
        `and x.event_type = 'SwapCreated' and x.outcome = 'applied'`,
      ),
      keys,
    );
    const conflicts = await projection.query<{
      provider_id: string;
      swap_id: string;
      field: string;
      final_value: string | null;
      reported_value: string | null;
      event_id: string;
      source: string;
    }>(
      `${perSwapLookup(
        'x.provider_id, x.swap_id, x.field, x.final_value, x.reported_value, x.event_id, x.source, x.occurred_at, x.conflict_id',
        'status_conflicts',
      )} order by t.occurred_at, t.conflict_id`,
      keys,
    );
    // A provider whose setup cannot be read fails its own swaps, not the round's others.
    const setups = new Map<string, Promise<ProviderSetup | undefined | ReconcileError>>();
    const setupOf = (providerId: string) => {
      let s = setups.get(providerId);
      if (!s)
        setups.set(
          providerId,
          (s = readProviderSetup(platform, providerId).catch(
            (e: unknown) =>
              new ReconcileError(`provider ${providerId}'s setup cannot be read: ${(e as Error).message}`),
          )),
        );
      return s;
    };
    const byRef = <T extends { provider_id: string; swap_id: string }>(rows: T[]) => {
      const m = new Map<string, T[]>();
      for (const row of rows) {
        const k = formatSwapRef({ providerId: row.provider_id, swapId: row.swap_id });
        const list = m.get(k);
        if (list) list.push(row);
        else m.set(k, [row]);
      }
      return m;
    };
    const rowOf = byRef(swaps.rows as (JudgedRow & { swap_id: string; final_at_ms: string | null })[]);
    const createdOf = byRef(created.rows);
    const conflictsOf = byRef(conflicts.rows);
    const loaded = new Map<string, LoadedSwap | ReconcileError>();
    for (const ref of refs) {
      const k = formatSwapRef(ref);
      const row = rowOf.get(k)?.[0];
      const payload = createdOf.get(k)?.[0]?.payload;
      const setup = await setupOf(ref.providerId);
      if (!row) loaded.set(k, new ReconcileError(`no swap ${k} in the projection`));
      else if (!payload)
        loaded.set(k, new ReconcileError(`swap ${k} has no applied SwapCreated in the journal`));
      else if (setup instanceof ReconcileError) loaded.set(k, setup);
      else
        loaded.set(k, {
          ref,
          row,
          createdJson: payload,
          finalAtMs: row.final_at_ms === null ? null : Number(row.final_at_ms),
          conflicts: (conflictsOf.get(k) ?? []).map((c) => ({
            field: c.field,
            finalValue: c.final_value,
            reportedValue: c.reported_value,
            eventId: c.event_id,
            source: c.source,
          })),
          setup: setup && { payloadKeys: setup.payloadKeys, defaultSlippage: setup.defaultSlippage },
        });
    }
    return loaded;
  }

  /** The checks of one loaded swap on the event loop (CPU only: the signature and the amounts). */
  private async judge(s: LoadedSwap): Promise<SwapReconciliation> {
    return { ...(await judgeSwap(s, this.options.policy)), finalAtMs: s.finalAtMs };
  }

  private judgePool(): JudgePool | undefined {
    const threads = this.options.judgeThreads ?? 0;
    if (threads > 0)
      this.pool ??= new JudgePool(threads, this.options.policy, (e) => {
        this.threadsLost?.inc();
        this.options.logger.error(
          { err: e },
          'a judge thread was lost: its swaps stay queued, a new thread judges the next round',
        );
      });
    return this.pool;
  }

  /**
   * Starts the judge threads and waits until they answer, so that the first round does not wait for their
   * loading (`start` does it; a caller that drains by itself may).
   */
  async prepare(): Promise<void> {
    await this.judgePool()?.ready();
  }

  /** Appends the verdict, and says it in a metric and a log line. */
  async record(r: SwapReconciliation): Promise<void> {
    await this.options.appender.append(r.event);
    this.recorded({
      swapId: r.swapId,
      providerId: r.providerId,
      basedOnEventId: r.basedOnEventId,
      verdict: r.result.verdict,
      failing: failingChecks(r.result),
      eventId: r.event.eventId,
      occurredAt: r.event.occurredAt,
      finalAtMs: r.finalAtMs,
    });
  }

  /** An appended verdict in a metric and a log line (a mismatch at warn with its checks, a match at debug). */
  private recorded(v: RecordedVerdict): void {
    this.verdicts?.inc({ provider: v.providerId, verdict: v.verdict });
    try {
      this.options.onVerdict?.(v);
    } catch (e) {
      // The verdict is appended: an observer's failure must not count it failed (it would be judged again).
      this.options.logger.warn(
        { err: e, swapId: v.swapId, provider: v.providerId },
        'verdict observer failed',
      );
    }
    const fields = {
      swapId: v.swapId,
      provider: v.providerId,
      verdict: v.verdict,
      basedOn: v.basedOnEventId,
    };
    if (v.verdict === 'MISMATCH') {
      this.options.logger.warn({ ...fields, failing: v.failing }, 'swap reconciled: MISMATCH');
    } else if (v.verdict === 'UNVERIFIABLE') {
      this.options.logger.info(
        { ...fields, unverifiable: v.failing.map((c) => c.name) },
        'swap reconciled: UNVERIFIABLE',
      );
    } else if (this.options.logger.isLevelEnabled('debug')) {
      // A match is the common case, thousands a second in a backlog: counted always, logged at debug.
      this.options.logger.debug(fields, `swap reconciled: ${v.verdict}`);
    }
  }

  /**
   * The verdicts of the loaded swaps among `claimed` (a queue round's rows or a sweep's), each based on
   * the event it was claimed by, judged together (judgeRound): a promise per claim's event id. A swap that
   * could not be loaded has none.
   */
  private async judgeClaimed(
    loaded: ReadonlyMap<string, LoadedSwap | ReconcileError>,
    claimed: readonly { ref: SwapRef; basedOnEventId: string }[],
  ): Promise<Map<string, Promise<EncodedVerdict>>> {
    const ready: LoadedSwap[] = [];
    for (const { ref, basedOnEventId } of claimed) {
      const swap = loaded.get(formatSwapRef(ref))!;
      if (!(swap instanceof ReconcileError)) ready.push({ ...swap, basedOnEventId });
    }
    const verdicts = await this.judgeRound(ready);
    return new Map(ready.map((s, i) => [s.basedOnEventId!, verdicts[i]!]));
  }

  /**
   * A round's swaps judged and encoded, in one chunk per judge thread (or one on the event loop): a
   * promise per swap of its verdict's outcome and wire bytes, in the swaps' order.
   */
  private async judgeRound(swaps: readonly LoadedSwap[]): Promise<Promise<EncodedVerdict>[]> {
    if (swaps.length === 0) return [];
    const schemaId = await this.options.appender.writerSchemaId();
    const pool = this.judgePool();
    const parts = Math.min(pool?.size ?? 1, swaps.length);
    const per = Math.ceil(swaps.length / parts);
    const verdicts: Promise<EncodedVerdict>[] = [];
    for (let at = 0; at < swaps.length; at += per) {
      const part = swaps.slice(at, at + per);
      const setups: Record<string, JudgeSetup | null> = {};
      for (const s of part) setups[s.ref.providerId] = s.setup ?? null;
      const chunk: JudgeChunk = {
        schemaId,
        swaps: part.map(({ ref, row, createdJson, conflicts, basedOnEventId }) => ({
          ref,
          row,
          createdJson,
          conflicts,
          basedOnEventId,
        })),
        setups,
      };
      const judged = pool
        ? pool.judge(chunk)
        : judgeChunk(chunk, this.options.policy, (this.envelope ??= envelopeType()));
      part.forEach((_, i) =>
        verdicts.push(
          judged.then(({ bytes, outcomes }) => {
            const o = outcomes[i]!;
            if (!o.ok) throw new ReconcileError(o.message);
            return { ...o, value: Buffer.from(bytes, o.offset, o.length) };
          }),
        ),
      );
    }
    return verdicts;
  }

  /**
   * One round over the queue; returns how many swaps were reconciled. The round's swaps are claimed, read
   * together (loadSwaps), judged in the judge threads (or on the event loop) and appended, each in its own
   * span: their appends share produce requests, so a round costs a few queries and about one Kafka round
   * trip, not that per swap.
   */
  async drainQueue(): Promise<number> {
    const client = await this.options.projection.connect();
    let done = 0;
    let taken: string[] = [];
    const judgedIds = new Set<string>();
    const round = randomUUID();
    /** In the claim's transaction (its failure claims nothing). */
    let claiming = false;
    try {
      const now = Date.now();
      const pass = this.pass && now - this.pass.startedAt < PASS_MS ? this.pass : undefined;
      // At the head of the queue the in-flight set matters whole: prune it first. Within a pass, only its
      // rows at or after the pass's place can lie ahead (those before it were passed by).
      if (!pass) {
        this.pass = undefined;
        await this.forgetFolded(client);
      }
      await client.query('begin');
      claiming = true;
      // Rounds claim one at a time, across reconcilers (a short transaction: the claim, not the judging), so
      // that this select sees every claim committed before it.
      await client.query(CLAIM_LOCK);
      // Read once the lock is held: the other lane's last claim is in the set by then.
      const excluded: string[] = [];
      for (const [id, f] of this.inFlight) if (!pass || f.queuedUs >= pass.queuedUs) excluded.push(id);
      // A swap made final by webhook waits for its confirming poll (platform.poll_confirmations), at most
      // confirmWaitMs after it became final. A verdict appended but not folded yet is not taken again.
      const rows = await client.query<{
        provider_id: string;
        swap_id: string;
        queued_by_event_id: string;
        queued_us: string;
        trace_parent: string | null;
      }>(
        `select q.provider_id, q.swap_id, q.queued_by_event_id, q.trace_parent,
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
         order by q.queued_at, q.provider_id, q.swap_id limit $1`,
        [
          this.batchSize,
          this.options.confirmWaitMs ?? 120_000,
          excluded,
          pass?.queuedUs.toString() ?? null,
          pass?.providerId ?? null,
          pass?.swapId ?? null,
          this.claimant,
        ],
      );
      // The next round goes on after this one's last row; a short round ends the pass (the queue's end).
      const last = rows.rows.at(-1);
      if (rows.rows.length < this.batchSize || !last) this.pass = undefined;
      else {
        const at = { queuedUs: BigInt(last.queued_us), providerId: last.provider_id, swapId: last.swap_id };
        // Two lanes: the pass stands at the further of their places (their rounds take disjoint rows).
        const behind = this.pass && this.pass.queuedUs > at.queuedUs;
        if (!behind) this.pass = { startedAt: this.pass?.startedAt ?? now, ...at };
      }
      // Claimed at once, not once judged: the claim keeps other reconcilers off these rows, the in-flight set
      // this one's other lane. A row the other lane took while this select ran is skipped.
      const mine = rows.rows.filter((r) => !this.inFlight.has(r.queued_by_event_id));
      taken = mine.map((r) => r.queued_by_event_id);
      await this.claim(client, round, taken);
      const queuedUs = new Map(mine.map((r) => [r.queued_by_event_id, BigInt(r.queued_us)]));
      const hold = (id: string) =>
        this.inFlight.set(id, { until: Date.now() + this.holdMs, queuedUs: queuedUs.get(id)! });
      for (const id of taken) hold(id);
      if (taken.length > 0) this.rounds.set(round, new Set(taken));
      await client.query('commit');
      claiming = false;
      // On the round's own connection (outside any transaction: the claim is committed).
      const refs = mine.map((r) => ({ providerId: r.provider_id, swapId: r.swap_id }));
      const loaded = await this.loadSwaps(refs, client);
      // Each swap is judged based on the queue row's event: the final status or correction that queued it.
      const verdictOf = await this.judgeClaimed(
        loaded,
        mine.map((r, i) => ({ ref: refs[i]!, basedOnEventId: r.queued_by_event_id })),
      );
      const judged = await Promise.all(
        mine.map(async ({ provider_id, swap_id, queued_by_event_id, trace_parent }) => {
          const ref = { providerId: provider_id, swapId: swap_id };
          try {
            const swap = loaded.get(formatSwapRef(ref))!;
            if (swap instanceof ReconcileError) throw swap;
            await this.appendVerdict(
              swap,
              verdictOf.get(queued_by_event_id)!,
              queued_by_event_id,
              trace_parent,
            );
            judgedIds.add(queued_by_event_id);
            // The wait for the projector starts once the verdict is appended, not when the round began.
            hold(queued_by_event_id);
            return 1;
          } catch (e) {
            this.options.logger.error(
              { err: e, provider: provider_id, swapId: swap_id },
              'reconciliation failed; the swap stays queued',
            );
            return 0;
          }
        }),
      );
      done = judged.reduce<number>((a, b) => a + b, 0);
    } catch (e) {
      if (claiming) await client.query('rollback').catch(() => {});
      this.pass = undefined;
      throw e;
    } finally {
      client.release();
      // What failed is taken again when the next pass reaches it (by any reconciler: its claim goes); what
      // was appended waits for the projector.
      const failed = taken.filter((id) => !judgedIds.has(id));
      for (const id of failed) this.inFlight.delete(id);
      if (failed.length > 0 && !claiming) await this.unclaim(round, failed);
    }
    return done;
  }

  /**
   * Drains what is queued: rounds follow one another at once while they come back full, in two lanes, so
   * that one round judges while the other waits on its queries or Kafka's acknowledgement (the in-flight
   * set keeps their swaps apart). Returns how many swaps were judged.
   */
  async drainAll(): Promise<number> {
    let judged = 0;
    let failed = false;
    const lane = async () => {
      try {
        for (;;) {
          const n = await this.drainQueue();
          judged += n;
          if (this.stopping || failed || n < this.batchSize) return;
        }
      } catch (e) {
        failed = true;
        throw e;
      }
    };
    // Both lanes end before this returns, a failed one included: nothing runs on once the caller moves on.
    const lanes = await Promise.allSettled([lane(), lane()]);
    for (const l of lanes) if (l.status === 'rejected') throw l.reason;
    return judged;
  }

  /**
   * Drops from the in-flight set the verdicts the projector has folded (their queue row is gone, or
   * judged) and those older than IN_FLIGHT_MS (appended, yet never folded: taken again), so that the set
   * stays about one projector lag long.
   */
  private async forgetFolded(client: pg.PoolClient): Promise<void> {
    const now = Date.now();
    // At most a few times a second: under a backlog the rounds follow one another at once.
    if (this.inFlight.size === 0 || now - this.forgotAt < 250) return;
    this.forgotAt = now;
    for (const [id, f] of this.inFlight) if (f.until <= now) this.inFlight.delete(id);
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
    const folded = asked.filter((id) => !still.has(id));
    for (const id of folded) this.inFlight.delete(id);
    // A round's claim goes once none of its swaps is in flight (folded, or past their time).
    const ended: string[] = [];
    for (const [round, ids] of this.rounds) {
      for (const id of ids) if (!this.inFlight.has(id)) ids.delete(id);
      if (ids.size === 0) {
        this.rounds.delete(round);
        ended.push(round);
      }
    }
    if (ended.length > 0)
      await client
        .query(`delete from platform.reconciliation_claims where round_id = any($1::uuid[])`, [ended])
        // A claim left behind keeps others off its rows only until its time is up.
        .catch((e: Error) => this.options.logger.warn({ err: e }, 'reconciliation claims not deleted'));
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
  private async unclaim(round: string, failed: readonly string[]): Promise<void> {
    const ids = this.rounds.get(round);
    for (const id of failed) ids?.delete(id);
    // A queue round with nothing left in flight goes whole; otherwise (or a sweep's) only the failed leave it.
    const whole = ids !== undefined && ids.size === 0;
    if (whole) this.rounds.delete(round);
    await this.options.projection
      .query(
        whole
          ? `delete from platform.reconciliation_claims where round_id = $1`
          : `update platform.reconciliation_claims
             set queued_by_event_ids = array(select unnest(queued_by_event_ids) except select unnest($2::uuid[]))
             where round_id = $1`,
        whole ? [round] : [round, failed],
      )
      .catch((e: Error) => this.options.logger.warn({ err: e }, 'reconciliation claims not released'));
  }

  /** Deletes claims long past their time (their reconciler stopped or died before deleting them). */
  async forgetStaleClaims(): Promise<number> {
    const r = await this.options.projection.query(
      `delete from platform.reconciliation_claims where claimed_until < now() - interval '${STALE_CLAIM}'`,
    );
    return r.rowCount ?? 0;
  }

  /**
   * Appends a judged swap's verdict in a `reconcile` span. For a queued swap the span is a child of the
   * message that queued it (a consumer processing one message: the verdict is caused by that request), so
   * the trace runs from the gateway or webhook through the projector into the verdict; its append carries
   * the same trace on to the fold. The span waits for the swap's judging (in a judge thread, or on the
   * event loop).
   */
  private appendVerdict(
    swap: LoadedSwap,
    judged: Promise<EncodedVerdict>,
    basedOnEventId: string,
    traceParent: string | null,
  ): Promise<void> {
    const parent = contextFromTraceParent(traceParent);
    return withSpan(
      'reconcile',
      {
        kind: SpanKind.CONSUMER,
        ...(parent ? { parent } : {}),
        attributes: { 'swap_ledger.based_on_event_id': basedOnEventId },
      },
      async (span) => {
        const v = await judged;
        span.setAttribute('swap_ledger.verdict', v.verdict);
        await this.options.appender.appendEncoded({
          eventId: v.eventId,
          eventType: 'SwapReconciled',
          aggregateKey: v.aggregateKey,
          value: v.value,
        });
        this.recorded({
          swapId: swap.ref.swapId,
          providerId: swap.row.provider_id,
          basedOnEventId: v.basedOnEventId,
          verdict: v.verdict,
          failing: v.failing,
          eventId: v.eventId,
          occurredAt: v.occurredAt,
          finalAtMs: swap.finalAtMs,
        });
      },
    );
  }

  /**
   * Final swaps that have no verdict and are not queued (e.g. finalised before the reconciler existed):
   * queued ones are the queue's business. They are claimed like a round's, by the event their verdict is
   * based on, so that two reconcilers' sweeps (the same cron) judge each once; every live claim is skipped,
   * this reconciler's own too (its last sweep's verdicts may not be folded yet). A sweep's claim is left to
   * expire.
   */
  async sweepMissed(limit = 1000): Promise<number> {
    const client = await this.options.projection.connect();
    const round = randomUUID();
    let missed: { provider_id: string; swap_id: string; based_on: string }[];
    try {
      await client.query('begin');
      await client.query(CLAIM_LOCK);
      missed = (
        await client.query<{ provider_id: string; swap_id: string; based_on: string }>(
          `select s.provider_id, s.swap_id, coalesce(s.last_correction_event_id, s.last_event_id) as based_on
           from swaps s
           where s.final
             and not exists (select 1 from reconciliations r
                             where r.provider_id = s.provider_id and r.swap_id = s.swap_id)
             and not exists (select 1 from reconciliation_queue q
                             where q.provider_id = s.provider_id and q.swap_id = s.swap_id)
             and coalesce(s.last_correction_event_id, s.last_event_id) not in
                 (select e.id from platform.reconciliation_claims c
                  cross join unnest(c.queued_by_event_ids) as e(id) where c.claimed_until > now())
           order by s.final_at limit $1`,
          [limit],
        )
      ).rows;
      await this.claim(
        client,
        round,
        missed.map((m) => m.based_on),
      );
      await client.query('commit');
    } catch (e) {
      await client.query('rollback').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
    const refs = missed.map((r) => ({ providerId: r.provider_id, swapId: r.swap_id }));
    const loaded = await this.loadSwaps(refs);
    // Judged like a queue round, in the judge threads when there are any: up to `limit` swaps at once
    // would otherwise hold the event loop.
    const verdictOf = await this.judgeClaimed(
      loaded,
      missed.map((m, i) => ({ ref: refs[i]!, basedOnEventId: m.based_on })),
    );
    const failed: string[] = [];
    const done = await Promise.allSettled(
      missed.map(async ({ based_on }, i) => {
        try {
          const swap = loaded.get(formatSwapRef(refs[i]!))!;
          if (swap instanceof ReconcileError) throw swap;
          // A sweep has no message that caused it: its span is a root.
          await this.appendVerdict(swap, verdictOf.get(based_on)!, based_on, null);
        } catch (e) {
          failed.push(based_on);
          throw e;
        }
      }),
    );
    // What failed may be taken at once, by the next sweep or another reconciler's.
    if (failed.length > 0) await this.unclaim(round, failed);
    // Every append has ended (none left running past the sweep); the first failure is the sweep's.
    for (const d of done) if (d.status === 'rejected') throw d.reason;
    return missed.length;
  }

  /** Final swaps that became final at or after `since`, oldest first (for `reconcile --since`). */
  async finalSwapsSince(since: Date): Promise<SwapRef[]> {
    const r = await this.options.projection.query<{ provider_id: string; swap_id: string }>(
      'select provider_id, swap_id from swaps where final and final_at >= $1 order by final_at, provider_id, swap_id',
      [since.toISOString()],
    );
    return r.rows.map((row) => ({ providerId: row.provider_id, swapId: row.swap_id }));
  }

  /** Every verdict recorded for a swap, oldest first (the last is the current one). */
  async history(
    ref: SwapRef,
  ): Promise<{ verdict: string; reconciledAt: string; basedOnEventId: string; eventId: string }[]> {
    const r = await this.options.projection.query<{
      verdict: string;
      reconciled_at: string;
      based_on_event_id: string;
      event_id: string;
    }>(
      `select verdict, reconciled_at, based_on_event_id, event_id from reconciliation_history
       where provider_id = $1 and swap_id = $2 order by reconciled_at, event_id`,
      [ref.providerId, ref.swapId],
    );
    return r.rows.map((h) => ({
      verdict: h.verdict,
      reconciledAt: h.reconciled_at,
      basedOnEventId: h.based_on_event_id,
      eventId: h.event_id,
    }));
  }

  /** Drains the queue every `intervalMs` and sweeps on the cron schedule, one round at a time. */
  start(intervalMs: number, sweepCron: string): void {
    const serial = (fn: () => Promise<unknown>) => {
      this.running = this.running
        .then(fn)
        .catch((e) => this.options.logger.error({ err: e }, 'reconciler round failed'));
    };
    serial(() => this.prepare());
    this.timer = setInterval(() => serial(() => this.drainAll()), intervalMs);
    this.sweep = cron.schedule(sweepCron, () =>
      serial(() => Promise.all([this.sweepMissed(), this.forgetStaleClaims()])),
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweep?.stop();
    await this.running;
    await this.pool?.close();
    this.pool = undefined;
  }
}
