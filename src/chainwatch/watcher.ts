import type pg from 'pg';
import {
  sourceLabel,
  type ChainClient,
  type ChainCurrencyDefinition,
  type ChainSources,
  type TxLookup,
} from '../chain/index.ts';
import { newEvent } from '../events/keys.ts';
import type { ChainRole, ChainTransactionObserved, ChainTransfer, SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import type { ChainWatchMetrics } from './metrics.ts';
import type { WorkLeases } from '../db/lease.ts';
import { RoundRunner, type GroupWork, type WorkGroup } from '../work/round.ts';
import { DueSchedule } from '../work/schedule.ts';

/**
 * The chain watcher: for every swap with a payin, payout or refund transaction reported (read from the
 * projection), it looks the transaction up on the chain of its currency and appends what it saw as a
 * ChainTransactionObserved, so the fold and a replay never call a chain. It looks again, with backoff, until
 * the transaction is at the configured depth, reverted, or past its deadline unseen (a fact too: appended
 * with deadlinePassed). The deadline runs from the swap's end (final or closed): an open swap's transactions
 * are watched without one. A source down or slow costs retries and a metric, never the reconciler: the
 * reconciler judges on what is observed and judges again when an observation arrives. A source that answers
 * with something that cannot be the transaction is appended as `refused`, and a transaction still unconfirmed
 * (or refused) past its deadline is appended with deadlinePassed: the check side says so. The final bound:
 * such a transaction is looked at for its currency's lookAfterDeadlineMinutes after that observation (it may
 * yet be mined, the source mend), then never again.
 *
 * An observation is appended when what it saw changed (status, block, transfers, proof, deadline), not at
 * every new confirmation: a few events per transaction.
 */

export interface WatchedTransaction {
  providerId: string;
  swapId: string;
  role: ChainRole;
  txid: string;
  /** The platform currency the transaction moves. */
  currency: string;
  /** When the swap ended (final or closed), ms; null while it is open. */
  endedAtMs: number | null;
  /** The latest observation folded, if any. */
  last: {
    status: string;
    block: number | null;
    blockHash: string | null;
    transfers: ChainTransfer[];
    proven: boolean;
    deadlinePassed: boolean;
  } | null;
}

export interface ChainWatcherOptions {
  projection: pg.Pool;
  appender: { appendAll(events: SwapEvent[]): Promise<void> };
  sources: ChainSources;
  clients: ReadonlyMap<string, ChainClient>;
  logger: Logger;
  metrics?: ChainWatchMetrics | undefined;
  /** First wait before looking again; doubled at each look, up to maxBackoffMs. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Transactions read per round, at most. */
  batchSize?: number;
  now?: () => number;
  /**
   * Several watchers: a transaction is looked up only under its lease (platform.work_leases), held until its
   * observation is appended, then released until it is due again. Without: alone.
   */
  leases?: Pick<WorkLeases, 'claim' | 'release' | 'prune'> | undefined;
}

export interface RoundReport {
  watched: number;
  looked: number;
  appended: number;
  failed: number;
}

const TERMINAL = `coalesce(o.status = 'reverted' or o.status = 'found'
                    or (o.status = 'not_found' and o.deadline_passed), false)`;

/**
 * The reported transactions not settled on their chain yet, in one query (oldest swaps first). `finalBounds`
 * (currency -> ms): a transaction whose latest observation was past its deadline longer ago than its
 * currency's bound (before `nowMs`) is no longer watched.
 */
export async function watchedTransactions(
  db: pg.Pool,
  limit: number,
  finalBounds: ReadonlyMap<string, number> = new Map(),
  nowMs: number = Date.now(),
): Promise<WatchedTransaction[]> {
  const r = await db.query<{
    provider_id: string;
    swap_id: string;
    role: ChainRole;
    txid: string;
    currency: string;
    ended_at_ms: string | null;
    status: string | null;
    block: string | null;
    block_hash: string | null;
    transfers: ChainTransfer[] | null;
    proven: boolean | null;
    deadline_passed: boolean | null;
  }>(
    `select s.provider_id, s.swap_id, t.role, t.txid, t.currency,
            extract(epoch from coalesce(s.final_at, s.closed_at)) * 1000 as ended_at_ms,
            o.status, o.block::text as block, o.block_hash, o.transfers, o.proven, o.deadline_passed
       from swaps s
       cross join lateral (values ('payin', s.payin_transaction_id, s.payload_currency_from),
                                  ('payout', s.payout_transaction_id, s.payload_currency_to),
                                  ('refund', s.refund_transaction_id, s.payload_currency_from)) as t(role, txid, currency)
       left join chain_observations o
         on o.provider_id = s.provider_id and o.swap_id = s.swap_id and o.role = t.role and o.txid = t.txid
       left join unnest($2::text[], $3::float8[]) as b(currency, bound_ms) on b.currency = t.currency
      where (s.payin_transaction_id is not null or s.payout_transaction_id is not null
             or s.refund_transaction_id is not null)
        and t.txid is not null and btrim(t.txid) <> '' and not ${TERMINAL}
        and not coalesce(o.deadline_passed
                         and extract(epoch from o.observed_at) * 1000 + b.bound_ms < $4::float8, false)
      order by s.created_at, s.provider_id, s.swap_id, t.role
      limit $1`,
    [limit, [...finalBounds.keys()], [...finalBounds.values()], nowMs],
  );
  return r.rows.map((row) => ({
    providerId: row.provider_id,
    swapId: row.swap_id,
    role: row.role,
    txid: row.txid,
    currency: row.currency,
    endedAtMs: row.ended_at_ms === null ? null : Number(row.ended_at_ms),
    last:
      row.status === null
        ? null
        : {
            status: row.status,
            block: row.block === null ? null : Number(row.block),
            blockHash: row.block_hash,
            transfers: row.transfers ?? [],
            proven: row.proven ?? false,
            deadlinePassed: row.deadline_passed ?? false,
          },
  }));
}

const sameTransfers = (a: readonly ChainTransfer[], b: readonly ChainTransfer[]) =>
  a.length === b.length &&
  a.every((t, i) => t.asset === b[i]!.asset && t.recipient === b[i]!.recipient && t.amount === b[i]!.amount);

/** Whether a look is worth an event: something a check reads changed since the latest observation. */
export function changed(last: WatchedTransaction['last'], seen: TxLookup, deadlinePassed: boolean): boolean {
  if (!last) return true;
  return (
    last.status !== seen.status ||
    last.block !== seen.block ||
    last.blockHash !== seen.blockHash ||
    last.proven !== seen.proven ||
    last.deadlinePassed !== deadlinePassed ||
    !sameTransfers(last.transfers, seen.transfers)
  );
}

/** Observations appended in one request, at most, while a source is still being looked at. */
const APPEND_EVERY = 50;
/** Looks after which the wait stops doubling (long past the maximum wait at any sensible base). */
const MAX_LOOKS = 20;

const key = (w: Pick<WatchedTransaction, 'providerId' | 'swapId' | 'role' | 'txid'>) =>
  JSON.stringify([w.providerId, w.swapId, w.role, w.txid]);

export class ChainWatcher {
  /**
   * When each watched transaction is due again, its looks counted as failures: base * 2^looks, up to the
   * maximum (in memory: a restart looks at once).
   */
  private readonly due: DueSchedule;
  private readonly failures = new Map<string, number>();
  private readonly now: () => number;
  private readonly rounds: RoundRunner<RoundReport>;

  constructor(private readonly options: ChainWatcherOptions) {
    this.now = options.now ?? Date.now;
    this.due = new DueSchedule({
      baseMs: 2 * (options.baseBackoffMs ?? 15_000),
      maxMs: options.maxBackoffMs ?? 600_000,
      maxExponent: MAX_LOOKS - 1,
    });
    this.rounds = new RoundRunner({ leases: options.leases, now: this.now, round: () => this.runRound() });
  }

  /** One round (joins one under way): every due transaction looked up once, observations appended. */
  round(): Promise<RoundReport> {
    return this.rounds.round();
  }

  /** Resolves once the round under way (if any) has ended. */
  settled(): Promise<void> {
    return this.rounds.settled();
  }

  private async runRound(): Promise<RoundReport> {
    const { options } = this;
    const finalBounds = new Map(
      [...options.sources.currencies.values()].map((c) => [c.currency, c.lookAfterDeadlineMinutes * 60_000]),
    );
    const watched = await watchedTransactions(
      options.projection,
      options.batchSize ?? 1000,
      finalBounds,
      this.now(),
    );
    options.metrics?.watched.set(watched.length);
    this.due.retain(new Set(watched.map(key)));
    const report: RoundReport = { watched: watched.length, looked: 0, appended: 0, failed: 0 };
    const bySource = new Map<string, WatchedTransaction[]>();
    for (const w of watched) {
      const group = options.sources.currencies.get(w.currency)?.source.name ?? '';
      const list = bySource.get(group) ?? [];
      list.push(w);
      bySource.set(group, list);
    }
    const round = await this.rounds.work(
      [...bySource].map(([sourceName, items]) => this.source(sourceName, items, report)),
    );
    for (const t of round.troubles)
      if (t.step === 'release')
        options.logger.warn({ err: t.error }, 'chain leases not released; they expire');
      else if (t.step === 'prune') options.logger.warn({ err: t.error }, 'chain leases not pruned');
    const failed = round.troubles.find((t) => t.step === 'claim' || t.step === 'commit');
    if (failed) throw failed.error;
    return report;
  }

  /**
   * One source's due transactions in a round. Sources are looked at side by side (each at its own rate), and
   * each appends what it saw as it goes (every APPEND_EVERY observations and at its end), its leases held
   * until then: one slow source holds neither the others nor their events.
   */
  private source(
    sourceName: string,
    items: WatchedTransaction[],
    report: RoundReport,
  ): WorkGroup<WatchedTransaction, void> {
    const { options } = this;
    const events: SwapEvent[] = [];
    const hands: GroupWork<WatchedTransaction, void> = {
      // One lookup at a time: the source's pacer spaces them.
      concurrency: 1,
      work: async (w) => {
        const currency = options.sources.currencies.get(w.currency);
        // No source for the currency: nothing to look at (the check says "no chain source for …").
        if (!currency) {
          this.due.failedAsOften(key(w), this.now(), MAX_LOOKS);
          return;
        }
        const client = options.clients.get(sourceName);
        if (!client) return;
        const event = await this.look(w, currency, client, report);
        if (event) events.push(event);
      },
      commit: async (last) => {
        if (!last && events.length < APPEND_EVERY) return false;
        await this.append(events, report);
        return true;
      },
    };
    return { name: sourceName, lanes: [{ items, key, schedule: this.due }], open: async () => hands };
  }

  /** Appends the observations made; not appended, they are looked at again next round, not after the backoff. */
  private async append(events: SwapEvent[], report: RoundReport): Promise<void> {
    if (events.length === 0) return;
    const batch = events.splice(0);
    try {
      await this.options.appender.appendAll(batch);
    } catch (e) {
      for (const ev of batch) {
        const p = ev.payload as ChainTransactionObserved;
        this.due.forget(
          key({ providerId: ev.providerId, swapId: ev.swapId!, role: p.role as 'payin', txid: p.txid }),
        );
      }
      throw e;
    }
    report.appended += batch.length;
    for (const ev of batch) {
      const p = ev.payload as ChainTransactionObserved;
      this.options.metrics?.observations.inc({ role: p.role, status: p.status });
    }
  }

  private async look(
    w: WatchedTransaction,
    currency: ChainCurrencyDefinition,
    client: ChainClient,
    report: RoundReport,
  ): Promise<SwapEvent | undefined> {
    const { options } = this;
    const source = currency.source;
    const label = sourceLabel(source);
    const k = key(w);
    this.due.failed(k, this.now(), 0);
    const started = performance.now();
    let seen: TxLookup;
    report.looked += 1;
    try {
      seen = await client.lookup(w.txid, currency);
    } catch (e) {
      report.failed += 1;
      const failures = (this.failures.get(source.name) ?? 0) + 1;
      this.failures.set(source.name, failures);
      options.metrics?.lookups.inc({ source: source.name, outcome: 'error' });
      options.metrics?.sourceFailures.set({ source: source.name }, failures);
      options.logger.warn(
        {
          source: source.name,
          swap: `${w.providerId}/${w.swapId}`,
          role: w.role,
          txid: w.txid,
          failures,
          err: e,
        },
        'chain lookup failed; looked up again later',
      );
      return undefined;
    } finally {
      options.metrics?.lookupSeconds.observe({ source: source.name }, (performance.now() - started) / 1000);
    }
    // A refused answer is an answer, but not one to trust: the source counts as failing until it mends.
    const failures = seen.status === 'refused' ? (this.failures.get(source.name) ?? 0) + 1 : 0;
    this.failures.set(source.name, failures);
    options.metrics?.sourceFailures.set({ source: source.name }, failures);
    options.metrics?.lookups.inc({ source: source.name, outcome: seen.status });
    if (seen.status === 'refused')
      options.logger.error(
        { source: source.name, swap: `${w.providerId}/${w.swapId}`, role: w.role, txid: w.txid, failures },
        `chain source answer refused: ${seen.detail}`,
      );
    const at = this.now();
    const deadlinePassed = w.endedAtMs !== null && at > w.endedAtMs + currency.deadlineMinutes * 60_000;
    if (!changed(w.last, seen, deadlinePassed)) return undefined;
    const observedAt = new Date(at).toISOString();
    return newEvent(
      'ChainTransactionObserved',
      new Date(at),
      {
        currency: w.currency,
        chain: source.name,
        family: source.family,
        txid: w.txid,
        role: w.role,
        status: seen.status,
        confirmations: seen.confirmations,
        requiredConfirmations: currency.confirmations,
        block: seen.block,
        blockHash: seen.blockHash,
        asset: currency.asset,
        decimals: currency.decimals,
        transfers: seen.transfers,
        source: label,
        proven: seen.proven,
        deadlinePassed,
        observedAt,
        detail: seen.detail,
        blockTime: seen.blockTime,
        fee: seen.fee,
        contractCall: seen.contractCall,
      },
      { providerId: w.providerId, swapId: w.swapId, source: 'chain' },
    );
  }
}
