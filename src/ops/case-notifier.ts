import type pg from 'pg';
import type { Logger } from '../observability/log.ts';
import type { Counter, MetricsRegistry } from '../observability/metrics.ts';
import {
  notificationRetryMs,
  owedNotifications,
  type CaseNotification,
  type NotifiedCase,
} from '../cases/notification.ts';

export interface CaseNotifierOptions {
  /** Searches the projection schema (the cases). */
  readonly projection: pg.Pool;
  /** The platform tables (the notifications' outbox). */
  readonly platform: pg.Pool;
  /** Where messages are POSTed (CASE_NOTIFY_URL). Never logged: chat webhooks carry their secret in it. */
  readonly url: string;
  /** A case unresolved this long is told once more (CASE_NOTIFY_AGE_HOURS). */
  readonly ageLimitMs: number;
  readonly logger: Logger;
  readonly metrics?: MetricsRegistry;
  readonly timeoutMs?: number;
  readonly now?: () => number;
  /** Cases opened this long ago or less are still owed their opening message when found resolved. */
  readonly resolvedWithinMs?: number;
}

export interface NotifierRound {
  /** Messages newly written to the outbox this round. */
  readonly owed: number;
  readonly delivered: number;
  readonly failed: number;
}

/** Most messages posted in one round: the rest wait for the next. */
const ROUND_LIMIT = 50;

/**
 * Tells a chat webhook (or any HTTP endpoint) when a case opens, reopens or ages past its limit. Each round
 * writes what the cases owe into platform.case_notifications (keyed: owed once), then POSTs the undelivered
 * rows that are due, each marked delivered after a 2xx or due again after a backoff: at least once, in its
 * own loop, so a slow or failing endpoint never holds the reconciler up.
 */
export class CaseNotifier {
  private readonly now: () => number;
  private readonly counted?: Counter;
  private running: Promise<NotifierRound> | undefined;

  constructor(private readonly options: CaseNotifierOptions) {
    this.now = options.now ?? Date.now;
    if (options.metrics) {
      this.counted = options.metrics.counter(
        'swap_ledger_case_notifications_total',
        'Case notification delivery attempts by outcome (delivered, failed)',
        ['outcome'],
      );
      const platform = options.platform;
      options.metrics.gauge(
        'swap_ledger_case_notifications_undelivered',
        'Case notifications written and not yet delivered',
        [],
        async function () {
          const r = await platform.query<{ n: number }>(
            `select count(*)::int as n from platform.case_notifications where delivered_at is null`,
          );
          this.set(r.rows[0]!.n);
        },
      );
    }
  }

  /** One round; a round under way is joined. */
  round(): Promise<NotifierRound> {
    this.running ??= this.runRound().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runRound(): Promise<NotifierRound> {
    const owed = await this.writeOwed();
    let delivered = 0;
    let failed = 0;
    for (const row of await this.due()) {
      if (await this.deliver(row)) delivered++;
      else failed++;
    }
    return { owed, delivered, failed };
  }

  /** Writes the messages the cases owe that are not written yet; returns how many were new. */
  private async writeOwed(): Promise<number> {
    const { projection, platform, ageLimitMs } = this.options;
    const nowMs = this.now();
    const r = await projection.query<{
      provider_id: string;
      swap_id: string;
      state: NotifiedCase['state'];
      trigger: string;
      opened_at: Date;
      openings: number;
      amount_at_stake: string | null;
      stake_currency: string | null;
      failing: string;
    }>(
      `select provider_id, swap_id, state, trigger, opened_at, openings, amount_at_stake::text, stake_currency, failing
         from cases where state <> 'resolved' or opened_at > $1`,
      [new Date(nowMs - (this.options.resolvedWithinMs ?? 86_400_000))],
    );
    const owed: CaseNotification[] = r.rows.flatMap((c) =>
      owedNotifications(
        {
          providerId: c.provider_id,
          swapId: c.swap_id,
          state: c.state,
          trigger: c.trigger,
          openedAt: new Date(c.opened_at).toISOString(),
          openings: c.openings,
          amountAtStake: c.amount_at_stake,
          stakeCurrency: c.stake_currency,
          failing: c.failing,
        },
        nowMs,
        ageLimitMs,
      ),
    );
    if (owed.length === 0) return 0;
    const written = await platform.query(
      `insert into platform.case_notifications (provider_id, swap_id, opening, kind, message, created_at, next_attempt_at)
       select p, s, o, k, m, $6, $6 from unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::jsonb[]) as t(p, s, o, k, m)
       on conflict do nothing`,
      [
        owed.map((n) => n.providerId),
        owed.map((n) => n.swapId),
        owed.map((n) => n.opening),
        owed.map((n) => n.kind),
        owed.map((n) => JSON.stringify(n.message)),
        new Date(nowMs),
      ],
    );
    return written.rowCount ?? 0;
  }

  private async due() {
    const r = await this.options.platform.query<{
      provider_id: string;
      swap_id: string;
      opening: number;
      kind: string;
      message: unknown;
      attempts: number;
    }>(
      `select provider_id, swap_id, opening, kind, message, attempts from platform.case_notifications
        where delivered_at is null and next_attempt_at <= $1
        order by next_attempt_at, created_at limit ${ROUND_LIMIT}`,
      [new Date(this.now())],
    );
    return r.rows;
  }

  /** One POST; true when the endpoint answered 2xx. */
  private async deliver(row: Awaited<ReturnType<CaseNotifier['due']>>[number]): Promise<boolean> {
    const key = [row.provider_id, row.swap_id, row.opening, row.kind];
    let error: string | undefined;
    let thrown: unknown;
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(row.message),
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      await res.body?.cancel();
      if (!res.ok) error = `HTTP ${res.status}`;
    } catch (e) {
      thrown = e;
      error = (e as Error).message;
    }
    if (error === undefined) {
      await this.options.platform.query(
        `update platform.case_notifications set delivered_at = $5, attempts = attempts + 1, last_error = null
          where provider_id = $1 and swap_id = $2 and opening = $3 and kind = $4`,
        [...key, new Date(this.now())],
      );
      this.counted?.inc({ outcome: 'delivered' });
      return true;
    }
    const attempts = row.attempts + 1;
    await this.options.platform.query(
      `update platform.case_notifications set attempts = $5, next_attempt_at = $6, last_error = $7
        where provider_id = $1 and swap_id = $2 and opening = $3 and kind = $4`,
      [...key, attempts, new Date(this.now() + notificationRetryMs(attempts)), error.slice(0, 500)],
    );
    this.counted?.inc({ outcome: 'failed' });
    this.options.logger.warn(
      {
        provider: row.provider_id,
        swapId: row.swap_id,
        kind: row.kind,
        attempts,
        // What threw, as pino's err (its stack); an endpoint's refusal is its HTTP status.
        ...(thrown === undefined ? { answer: error } : { err: thrown }),
      },
      'case notification not delivered; tried again after a backoff',
    );
    return false;
  }
}
