import type { ConsoleDb } from '../db.ts';
import { projectionLag, type PartitionLag } from '../../projector/lag.ts';
import { badge, html, table, time, type Html } from '../html.ts';
import { workersSection, type WorkerHealthBoard } from '../workers.ts';

/** How long a swap request may wait for its creation (or failure) before it counts as stuck. */
export const STUCK_AFTER = '2 minutes';

async function lagOf(db: ConsoleDb): Promise<PartitionLag[] | string> {
  if (!db.kafka) return 'Kafka not configured';
  try {
    const { admin, topic } = db.kafka;
    return await db.withClient((client) => projectionLag(admin, client, topic));
  } catch (e) {
    return `Kafka did not answer: ${(e as Error).message}`;
  }
}

export async function operationsLive(db: ConsoleDb, workers?: WorkerHealthBoard): Promise<Html> {
  const [workerHealth, lag, deadLetters, outbox, stuck, providers, apiKeys, payloadKeys, queue] =
    await Promise.all([
      workersSection(workers),
      lagOf(db),
      db.query<Record<string, string>>(
        `select dead_letter_id, topic, partition, "offset"::text as "offset", aggregate_key, reason, failed_at, status
       from dead_letters where status = 'open' order by failed_at limit 100`,
      ),
      db.query<{ topic: string; pending: string; oldest: string | null }>(
        `select topic, count(*)::text as pending, min(created_at) as oldest from platform.outbox
       where published_at is null group by topic order by topic`,
      ),
      db.query<Record<string, string>>(
        `select request_id, provider_id, trade_method, currency_from, currency_to, outcome, requested_at
       from swap_requests
       where outcome in ('requested', 'unknown') and requested_at < now() - $1::interval
       order by requested_at limit 100`,
        [STUCK_AFTER],
      ),
      db.query<Record<string, string>>(
        `select id, display_name, enabled, base_url, managed_by, poll_interval_seconds, updated_at from platform.providers order by id`,
      ),
      // Key ids and ages only: a digest or a credential is never shown.
      db.query<Record<string, string>>(
        `select provider_id, key_id, created_at, revoked_at,
         justify_interval(date_trunc('minute', now() - created_at))::text as age
       from platform.provider_api_keys order by provider_id, created_at`,
      ),
      db.query<Record<string, string>>(
        `select provider_id, key_id, curve, valid_from, valid_to,
         justify_interval(date_trunc('day', now() - valid_from))::text as age
       from platform.provider_payload_keys order by provider_id, valid_from`,
      ),
      db.query<{ n: string; oldest: string | null }>(
        'select count(*)::text as n, min(queued_at) as oldest from reconciliation_queue',
      ),
    ]);
  const totalLag = typeof lag === 'string' ? undefined : lag.reduce((a, p) => a + p.lag, 0n);
  const pendingOutbox = outbox.reduce((a, o) => a + BigInt(o.pending), 0n);
  return html`<div class="cards">
      <div class="card" data-count="lag">
        <div class="n">${totalLag ?? '?'}</div>
        <div class="l">projector lag (events)</div>
      </div>
      <div class="card" data-count="dead-letters">
        <div class="n">${deadLetters.length}</div>
        <div class="l">open dead letters</div>
      </div>
      <div class="card" data-count="outbox">
        <div class="n">${pendingOutbox}</div>
        <div class="l">outbox depth</div>
      </div>
      <div class="card" data-count="stuck">
        <div class="n">${stuck.length}</div>
        <div class="l">stuck requests (&gt; ${STUCK_AFTER})</div>
      </div>
      <div class="card" data-count="queue">
        <div class="n">${queue[0]?.n ?? '0'}</div>
        <div class="l">reconciliation queue</div>
      </div>
    </div>
    <p class="muted">
      Finance figures are read
      ${db.usesFinanceRole ? 'under the read-only role swap_ledger_finance' : "with the console's own login (it may not take the finance role)"};
      the console's own login (swap_ledger_console_reader) may only read, and every session is read-only.
    </p>
    ${workerHealth}
    <h2>Projector lag per partition <span class="muted">(${db.kafka?.topic ?? ''})</span></h2>
    ${
      typeof lag === 'string'
        ? html`<p class="error">${lag}</p>`
        : table(
            ['partition', 'end offset', 'projected up to', 'lag'],
            lag.map((p) => [p.partition, p.endOffset, p.nextOffset, html`<span class="num">${p.lag}</span>`]),
          )
    }
    <h2>Dead letters (open)</h2>
    ${table(
      ['id', 'where', 'key', 'reason', 'failed at', 'status'],
      deadLetters.map((d) => [
        d.dead_letter_id,
        `${d.topic} p${d.partition}:${d.offset}`,
        d.aggregate_key,
        d.reason,
        time(d.failed_at),
        badge(d.status),
      ]),
      'no open dead letter',
    )}
    <h2>Outbox (events waiting for Kafka)</h2>
    ${table(
      ['topic', 'pending', 'oldest'],
      outbox.map((o) => [o.topic, o.pending, time(o.oldest)]),
      'empty: every event reached Kafka',
    )}
    <h2>Stuck swap requests</h2>
    ${table(
      ['request', 'partner', 'method', 'pair', 'outcome', 'requested'],
      stuck.map((s) => [
        s.request_id,
        s.provider_id,
        s.trade_method,
        `${s.currency_from} → ${s.currency_to}`,
        badge(s.outcome),
        time(s.requested_at),
      ]),
      'none',
    )}
    <h2>Providers</h2>
    ${table(
      ['id', 'name', 'enabled', 'base URL', 'managed by', 'poll every', 'updated'],
      providers.map((p) => [
        p.id,
        p.display_name,
        p.enabled ? 'yes' : 'no',
        withoutCredentials(p.base_url),
        p.managed_by,
        `${p.poll_interval_seconds} s`,
        time(p.updated_at),
      ]),
      'no provider registered',
    )}
    <div class="grid">
      <section>
        <h2>Webhook keys (ids and ages only)</h2>
        ${table(
          ['provider', 'key', 'created', 'age', 'revoked'],
          apiKeys.map((k) => [
            k.provider_id,
            k.key_id,
            time(k.created_at),
            k.age,
            k.revoked_at ? time(k.revoked_at) : badge('ok'),
          ]),
        )}
      </section>
      <section>
        <h2>Payload signing keys</h2>
        ${table(
          ['provider', 'key', 'curve', 'valid from', 'valid to', 'age'],
          payloadKeys.map((k) => [
            k.provider_id,
            k.key_id,
            k.curve,
            time(k.valid_from),
            time(k.valid_to),
            k.age,
          ]),
        )}
      </section>
    </div>`;
}

/** A base URL as shown: any user:pass@ a row stored before loads refused them is left out. */
export function withoutCredentials(url: string | undefined): string | undefined {
  if (url === undefined) return url;
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}
