import type { Admin } from 'kafkajs';
import type pg from 'pg';
import { PLATFORM_SCHEMA } from '../db/platform-schema.ts';
import { projectionLag, type PartitionLag } from '../projector/lag.ts';

/**
 * Before a month is sealed, the projection must hold every event the log held when the close was asked for:
 * an event recorded in the month but folded after its seal would change a closed month. So a close waits for
 * the projector to reach the topic's ends taken at its start, and for the outbox to have relayed what it
 * holds (events the gateway kept while Kafka was away), and refuses when they do not within its wait.
 */

export interface CatchUp {
  /** Per partition: the end taken at the start, and where the projector is now. */
  readonly lags: readonly PartitionLag[];
  /** Outbox rows of the topic not yet published. */
  readonly outboxPending: number;
}

/** What still stands between the projection and the log, in words; undefined when nothing does. */
export function catchUpProblem(state: CatchUp): string | undefined {
  const behind = state.lags.filter((l) => l.lag > 0n);
  const parts: string[] = [];
  if (behind.length > 0) {
    const events = behind.reduce((n, l) => n + l.lag, 0n);
    parts.push(
      `the projector is ${events} event(s) behind the log (partition ${behind.map((l) => `${l.partition}: ${l.lag}`).join(', ')})`,
    );
  }
  if (state.outboxPending > 0)
    parts.push(`${state.outboxPending} event(s) wait in the outbox to be relayed to the log`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

export interface CatchUpOptions {
  readonly admin: Admin;
  readonly pool: pg.Pool;
  readonly topic: string;
  readonly timeoutMs: number;
  /** Said every few seconds while waiting. */
  readonly progress?: (problem: string) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** Waits until the projection holds the log as it stood at the call; the problem left when the wait ends. */
export async function awaitCatchUp(options: CatchUpOptions): Promise<string | undefined> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = options.now ?? Date.now;
  const deadline = now() + options.timeoutMs;
  const client = await options.pool.connect();
  try {
    // The ends are taken once: events appended during the wait belong to whatever comes after the close.
    const ends = new Map(
      (await projectionLag(options.admin, client, options.topic)).map((l) => [l.partition, l.endOffset]),
    );
    let lastSaid = now();
    for (;;) {
      const at = await client.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from projector_checkpoints where topic = $1',
        [options.topic],
      );
      const next = new Map(at.rows.map((r) => [r.partition, BigInt(r.next_offset)]));
      const lags = [...ends].map(([partition, endOffset]) => {
        const nextOffset = next.get(partition) ?? 0n;
        return {
          partition,
          endOffset,
          nextOffset,
          lag: endOffset > nextOffset ? endOffset - nextOffset : 0n,
        };
      });
      const problem = catchUpProblem({ lags, outboxPending: await outboxPending(client, options.topic) });
      if (!problem || now() >= deadline) return problem;
      if (now() - lastSaid >= 5_000) {
        options.progress?.(problem);
        lastSaid = now();
      }
      await sleep(250);
    }
  } finally {
    client.release();
  }
}

/** Unpublished outbox rows of the topic; none where the platform schema has no outbox (never migrated). */
async function outboxPending(client: pg.ClientBase, topic: string): Promise<number> {
  const exists = await client.query<{ t: string | null }>(
    `select to_regclass('${PLATFORM_SCHEMA}.outbox') as t`,
  );
  if (!exists.rows[0]?.t) return 0;
  const r = await client.query<{ n: string }>(
    `select count(*) as n from ${PLATFORM_SCHEMA}.outbox where published_at is null and topic = $1`,
    [topic],
  );
  return Number(r.rows[0]!.n);
}
