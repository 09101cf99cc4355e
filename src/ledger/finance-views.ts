import pg from 'pg';
import { assertIdentifier, connectClient } from '../db/client.ts';
import { PLATFORM_SCHEMA } from '../db/platform-schema.ts';
import { caseAgeBucketSql } from './aging.ts';
import { FINANCE_SCHEMA } from './finance-schema.ts';

export { FINANCE_SCHEMA };
/** Read-only role for finance: it may read the finance views, nothing else. */
export const FINANCE_ROLE = 'swap_ledger_finance';

/**
 * Views for finance over the live projection. A view binds to the tables it was created over, so after
 * replay promotes a rebuilt schema these are created again over the new live tables (same SQL).
 * Later views may read earlier ones (`${finance}.postings`); they are dropped in reverse order.
 * Days are UTC calendar days of the effective time, whatever the session's time zone.
 * Over 100 lines on purpose: it is a list of view definitions (SQL), one entry a view, not logic to split.
 */
export function financeViews(
  live: string,
  finance = FINANCE_SCHEMA,
  /** The platform schema when its confirmations view exists (migrated first by `db migrate` and `up`). */
  platform: string | null = PLATFORM_SCHEMA,
): { name: string; sql: string }[] {
  assertIdentifier(live);
  assertIdentifier(finance);
  if (platform !== null) assertIdentifier(platform);
  // Final swaps the partner never completed before the confirmation deadline (the poller gave up asking).
  const neverReported =
    platform === null
      ? ''
      : `union all
          select s.swap_id, s.provider_id, s.status, s.final_at,
              'never reported before the confirmation deadline: ' || array_to_string(c.missing, ', ')
            from ${live}.swaps s
            join ${platform}.confirmations_never_reported c
              on c.provider_id = s.provider_id and c.swap_id = s.swap_id`;
  const day = (col: string) => `(${col} at time zone 'UTC')::date`;
  return [
    {
      name: 'swaps',
      sql: `select swap_id, provider_id, trade_method, currency_from, currency_to, payload_currency_from,
        payload_currency_to, amount_from, quoted_amount_to, amount_to, created_provider_fees, created_referral_fees,
        created_payout_network_fees, provider_fees, referral_fees, payout_network_fees, status, status_class,
        final, final_at, closed_at, corrected, created_at, payin_transaction_id, payout_transaction_id,
        refund_transaction_id, extra_fees
        from ${live}.swaps`,
    },
    {
      name: 'open_swaps_by_age',
      sql: `select swap_id, provider_id, status, trade_method, payload_currency_from, payload_currency_to, amount_from,
        created_at, date_trunc('hour', now() - created_at) as age,
        case when now() - created_at < interval '1 hour' then '0-1h'
             when now() - created_at < interval '1 day' then '1-24h'
             when now() - created_at < interval '7 days' then '1-7d'
             else '7d+' end as age_bucket
        , status_class from ${live}.swaps where not final`,
    },
    {
      // Every journal line with the swap's pair; debit positive, credit negative.
      name: 'postings',
      sql: `select p.posting_id, p.entry_id, p.line, p.entry_kind, p.swap_id, p.swap_version, p.provider_id,
        p.account, p.currency, p.amount, p.effective_at, p.recorded_at, s.trade_method,
        s.payload_currency_from as pair_from, s.payload_currency_to as pair_to
        from ${live}.ledger_postings p
        join ${live}.swaps s on s.provider_id = p.provider_id and s.swap_id = p.swap_id`,
    },
    {
      // Balances per account, partner and currency over the whole journal (finance.balances_as_of for a time).
      name: 'balances',
      sql: `select account, provider_id, currency, sum(amount) as balance, count(*) as postings
        from ${finance}.postings group by account, provider_id, currency`,
    },
    {
      // Referral revenue per partner and currency: accrued (booked receivable, net of reversals), invoiced (the
      // invoices in force, disputed lines left out), settled (payments set against it), outstanding.
      name: 'referral_books',
      sql: `with accrued as (
          select provider_id, currency, sum(amount) as amount from ${finance}.postings
           where account = 'referral_fees_receivable' and entry_kind <> 'settlement' group by provider_id, currency),
        settled as (
          select provider_id, currency, -sum(amount) as amount from ${finance}.postings
           where account = 'referral_fees_receivable' and entry_kind = 'settlement' group by provider_id, currency),
        invoiced as (
          select i.provider_id, t->>'currency' as currency, sum((t->>'amount')::numeric) as amount
            from ${live}.invoices i cross join jsonb_array_elements(i.totals) t
           where not exists (select 1 from ${live}.invoices n where n.supersedes = i.invoice_number)
           group by i.provider_id, t->>'currency'),
        keys as (select provider_id, currency from accrued union select provider_id, currency from invoiced)
        select k.provider_id, k.currency, coalesce(a.amount, 0) as accrued, coalesce(i.amount, 0) as invoiced,
          coalesce(s.amount, 0) as settled, coalesce(i.amount, 0) - coalesce(s.amount, 0) as outstanding
          from keys k
          left join accrued a on a.provider_id = k.provider_id and a.currency = k.currency
          left join invoiced i on i.provider_id = k.provider_id and i.currency = k.currency
          left join settled s on s.provider_id = k.provider_id and s.currency = k.currency`,
    },
    {
      // Referral fees receivable by the platform, net of reversals, per partner, currency and UTC day.
      name: 'referral_revenue_daily',
      sql: `select provider_id, currency, ${day('effective_at')} as day, sum(amount) as referral_revenue,
        count(distinct swap_id) as swaps
        from ${finance}.postings where account = 'referral_fees_receivable'
        group by provider_id, currency, ${day('effective_at')}`,
    },
    {
      // Volume per pair and partner and UTC day: payins (source currency) and payouts to users (destination),
      // net of refunds and reversals; swaps counts those whose net payin or payout in the day is not zero.
      name: 'volume_daily',
      sql: `select provider_id, pair_from as currency_from, pair_to as currency_to, day,
        sum(volume_from) as volume_from, sum(volume_to) as volume_to,
        count(*) filter (where volume_from <> 0 or volume_to <> 0) as swaps
        from (select provider_id, pair_from, pair_to, swap_id, ${day('effective_at')} as day,
                coalesce(-sum(amount) filter (where account = 'user_payin' and currency = pair_from), 0) as volume_from,
                coalesce(sum(amount) filter (where account = 'user_payout' and currency = pair_to), 0) as volume_to
              from ${finance}.postings where account in ('user_payin', 'user_payout')
              group by provider_id, pair_from, pair_to, swap_id, ${day('effective_at')}) per_swap
        group by provider_id, pair_from, pair_to, day`,
    },
    {
      // The reconciler's latest verdict per swap (the current one: earlier verdicts are in the history).
      name: 'reconciliation_verdicts',
      sql: `select r.swap_id, r.provider_id, s.status, r.verdict, r.reconciled_at, r.based_on_event_id, r.checks
        from ${live}.reconciliations r
        join ${live}.swaps s on s.provider_id = r.provider_id and s.swap_id = r.swap_id`,
    },
    {
      // Every verdict ever recorded per swap, each with the event it is based on, newest first per swap.
      name: 'reconciliation_history',
      sql: `select h.swap_id, h.provider_id, h.verdict, h.reconciled_at, h.based_on_event_id, h.event_id, h.checks,
        h.event_id = r.event_id as current
        from ${live}.reconciliation_history h
        left join ${live}.reconciliations r on r.provider_id = h.provider_id and r.swap_id = h.swap_id`,
    },
    {
      // Partner reports the platform did not apply: rejected by the fold (with the reason) or contradicting
      // a final swap (with the final and the reported figure, one row per contradicted field).
      name: 'event_exceptions',
      sql: `select j.event_id, j.provider_id, j.swap_id, j.event_type, j.source, j.outcome, j.reason,
        j.occurred_at, j.recorded_at, c.field, c.final_value, c.reported_value, j.payload
        from ${live}.event_journal j
        left join ${live}.status_conflicts c on c.event_id = j.event_id
        where j.outcome in ('rejected', 'contradicted')
           or (j.outcome = 'applied' and c.event_id is not null)`,
    },
    {
      // The chain evidence per swap: each reported transaction (payin, payout, refund) beside what the chain
      // watcher last saw of it (null columns: not observed, e.g. no chain source for its currency).
      name: 'chain_evidence',
      sql: `select s.swap_id, s.provider_id, s.status, s.final_at, t.role, t.txid, t.currency, t.signed_address,
        o.chain, o.status as chain_status, o.confirmations, o.required_confirmations, o.block, o.asset,
        o.transfers, o.proven, o.deadline_passed, o.observed_at, o.source, o.detail, o.event_id
        from ${live}.swaps s
        cross join lateral (values
          ('payin', s.payin_transaction_id, s.payload_currency_from, s.payin_address),
          ('payout', s.payout_transaction_id, s.payload_currency_to, s.payout_address),
          ('refund', s.refund_transaction_id, s.payload_currency_from, s.refund_address)
        ) as t(role, txid, currency, signed_address)
        left join ${live}.chain_observations o on o.provider_id = s.provider_id and o.swap_id = s.swap_id
          and o.role = t.role and o.txid = t.txid
        where t.txid is not null`,
    },
    {
      // Swaps whose latest verdict is MISMATCH, one row per check that did not pass (MISMATCH or UNVERIFIABLE).
      // A NOT_APPLICABLE check (one that does not apply to the outcome) never counts and is never listed.
      // Views are re-created by every `db migrate` (migrateFinanceViews) and promotion: this SQL is the migration.
      name: 'reconciliation_mismatches',
      sql: `select v.swap_id, v.provider_id, v.status, v.verdict, v.reconciled_at, c.ordinal as check_no,
        c.value->>'name' as check_name, c.value->>'verdict' as check_verdict, c.value->>'expected' as expected,
        c.value->>'actual' as actual, c.value->>'delta' as delta, c.value->>'tolerance' as tolerance,
        c.value->>'detail' as detail
        from ${finance}.reconciliation_verdicts v
        cross join lateral jsonb_array_elements(v.checks) with ordinality as c(value, ordinal)
        where v.verdict = 'MISMATCH' and c.value->>'verdict' not in ('MATCHED', 'WITHIN_TOLERANCE', 'NOT_APPLICABLE')`,
    },
    {
      // The quote as contract: every quote check of a current verdict that moved (quoted figure, actual, delta).
      name: 'quote_deviations',
      sql: `select r.swap_id, r.provider_id, s.trade_method, s.payload_currency_to as currency, r.reconciled_at,
        c.value->>'name' as check_name, c.value->>'verdict' as check_verdict, c.value->>'expected' as quoted,
        c.value->>'actual' as actual, c.value->>'delta' as delta, c.value->>'detail' as detail
        from ${live}.reconciliations r
        join ${live}.swaps s on s.provider_id = r.provider_id and s.swap_id = r.swap_id
        cross join lateral jsonb_array_elements(r.checks) as c(value)
        where c.value->>'name' like 'quote.%' and c.value->>'verdict' in ('WITHIN_TOLERANCE', 'MISMATCH')`,
    },
    {
      // Quote deviations per partner, check, currency and method: how often, how many beyond the band, how much.
      name: 'quote_deviations_by_partner',
      sql: `select provider_id, check_name, currency, trade_method, count(*) as deviations,
        count(*) filter (where check_verdict = 'MISMATCH') as mismatches,
        sum(delta::numeric) filter (where delta ~ '^-?[0-9]+(\\.[0-9]+)?$') as net_delta
        from ${finance}.quote_deviations group by provider_id, check_name, currency, trade_method`,
    },
    {
      // Final swaps whose reported figures the journal does not (fully) carry, and why: nothing is guessed.
      // Closed swaps where money moved (a deposit after expiry), until a later final status settles them.
      name: 'ledger_exceptions',
      sql: `select swap_id, provider_id, status, final_at, reason from (
          select swap_id, provider_id, status, final_at, 'source amount unknown: no payin posted' as reason
            from ${live}.swaps where final and status in ('FINISHED', 'REFUNDED') and amount_from is null
          union all
          select swap_id, provider_id, status, final_at, 'final amount unknown: no payout posted'
            from ${live}.swaps where final and status = 'FINISHED' and amount_to is null
          union all
          select swap_id, provider_id, status, final_at, 'fees not all reported yet: ' ||
              concat_ws(', ', case when provider_fees is null then 'providerFees' end,
                case when referral_fees is null then 'referralFees' end,
                case when payout_network_fees is null then 'payoutNetworkFees' end)
            from ${live}.swaps where final and status = 'FINISHED'
              and (provider_fees is null or referral_fees is null or payout_network_fees is null)
          union all
          select swap_id, provider_id, status, final_at, 'no posting rule for final status ' || status
            from ${live}.swaps where final and status not in ('FINISHED', 'REFUNDED', 'EXPIRED')
          union all
          select swap_id, provider_id, status, final_at,
              'reported figures not posted: the interface defines no amounts for ' || status
            from ${live}.swaps where final and status in ('REFUNDED', 'EXPIRED')
              and (coalesce(amount_to, 0) <> 0 or coalesce(provider_fees, 0) <> 0
                or coalesce(referral_fees, 0) <> 0 or coalesce(payout_network_fees, 0) <> 0)
          union all
          select swap_id, provider_id, status, closed_at, 'money moved on an expired swap: ' ||
              concat_ws(', ', case when payin_transaction_id is not null then 'a deposit (payin ' || payin_transaction_id || ')' end,
                case when payout_transaction_id is not null then 'a payout (' || payout_transaction_id || ')' end,
                case when refund_transaction_id is not null then 'a refund (' || refund_transaction_id || ')' end,
                case when coalesce(amount_to, 0) <> 0 then 'an amount of ' || amount_to end) ||
              '; not settled by a final status'
            from ${live}.swaps where status_class = 'closed'
              and (payin_transaction_id is not null or payout_transaction_id is not null
                or refund_transaction_id is not null or coalesce(amount_to, 0) <> 0)
          union all
          select s.swap_id, s.provider_id, s.status, coalesce(s.final_at, s.closed_at),
              'reported but not on chain: the ' || o.role || ' transaction ' || o.txid ||
              case when o.status = 'reverted' then ' failed on ' || o.chain || ' (reverted: it paid nothing)'
                   else ' was not found on ' || o.chain || ' by its deadline' end
            from ${live}.chain_observations o
            join ${live}.swaps s on s.provider_id = o.provider_id and s.swap_id = o.swap_id
            where o.status = 'reverted' or (o.status = 'not_found' and o.deadline_passed)
          union all
          select s.swap_id, s.provider_id, s.status, coalesce(s.final_at, s.closed_at),
              case when o.status = 'refused'
                   then 'source unreliable: ' || o.source || ' answered for the ' || o.role || ' transaction ' ||
                        o.txid || ' with something that cannot be it, past its deadline' ||
                        coalesce(' (' || o.detail || ')', '')
                   else 'unconfirmed past the deadline: the ' || o.role || ' transaction ' || o.txid || ' has ' ||
                        o.confirmations || ' of ' || o.required_confirmations || ' confirmations on ' || o.chain end
            from ${live}.chain_observations o
            join ${live}.swaps s on s.provider_id = o.provider_id and s.swap_id = o.swap_id
            where o.deadline_passed and (o.status = 'refused'
              or (o.status in ('found', 'pending') and o.confirmations < o.required_confirmations))
          union all
          select s.swap_id, s.provider_id, s.status, coalesce(s.final_at, s.closed_at),
              'one transfer, one claim: the ' || c.role || ' transaction ' || c.txid || ' (transfer ' || c.transfer ||
              ') already evidences ' || h.provider_id || '/' || h.swap_id || ' (' || h.role || ')'
            from ${live}.chain_claims c
            cross join lateral (select provider_id, swap_id, role from ${live}.chain_claims h
                                 where h.chain = c.chain and h.txid = c.txid and h.transfer = c.transfer
                                 order by h.event_id, h.provider_id, h.swap_id, h.role limit 1) h
            join ${live}.swaps s on s.provider_id = c.provider_id and s.swap_id = c.swap_id
            where (h.provider_id, h.swap_id, h.role) <> (c.provider_id, c.swap_id, c.role)
          ${neverReported}
        ) e`,
    },
    {
      // Every swap's case (README, "Cases"): its state, outcome, what opened it, the amount at stake, its age.
      name: 'cases',
      sql: `select provider_id, swap_id, state, outcome, trigger, trigger_event_id, opened_at, openings, resolved_at,
        amount_at_stake, stake_currency, pending_write_off, resolution, history,
        case when state <> 'resolved' then now() - opened_at end as age
        from ${live}.cases`,
    },
    {
      // Unresolved cases per partner by age bucket (at query time) and currency at stake: how many, how much;
      // a case whose verdict named no amount counts in stake_unknown (its currency is null).
      name: 'open_cases_by_age',
      sql: `select provider_id, age_bucket, stake_currency as currency, count(*) as cases,
        sum(amount_at_stake) as amount_at_stake, count(*) filter (where amount_at_stake is null) as stake_unknown,
        min(opened_at) as oldest_opened_at
        from (select provider_id, stake_currency, amount_at_stake, opened_at,
                ${caseAgeBucketSql('opened_at')} as age_bucket
              from ${live}.cases where state <> 'resolved') c
        group by provider_id, age_bucket, stake_currency`,
    },
    {
      // Accepted losses booked per partner, currency and UTC month (the write_offs account, debit positive).
      name: 'write_offs_monthly',
      sql: `select provider_id, currency, date_trunc('month', effective_at at time zone 'UTC')::date as month,
        sum(amount) as written_off, count(distinct swap_id) as swaps
        from ${finance}.postings where account = 'write_offs'
        group by provider_id, currency, date_trunc('month', effective_at at time zone 'UTC')::date`,
    },
  ];
}

/**
 * `balances_as_of(as_of, known_at)`: balances per account, partner and currency of the postings effective
 * at or before `as_of`, as the journal stood at `known_at` (recorded at or before it; null: everything recorded
 * so far). Reads the finance postings view by name, so it follows the views when they are re-created.
 */
function balancesFunction(finance: string): string {
  return `create function ${finance}.balances_as_of(as_of timestamptz, known_at timestamptz default null)
    returns table (account text, provider_id text, currency text, balance numeric, postings bigint)
    language sql stable as $$
      select p.account, p.provider_id, p.currency, sum(p.amount), count(*)
        from ${finance}.postings p
       where p.effective_at <= as_of and (known_at is null or p.recorded_at <= known_at)
       group by p.account, p.provider_id, p.currency
       order by p.account, p.provider_id, p.currency
    $$`;
}

/** Creates (or re-creates over the current live tables) the finance schema, its views, function and grants. */
export async function ensureFinanceViews(
  client: pg.ClientBase,
  live: string,
  finance = FINANCE_SCHEMA,
): Promise<void> {
  const confirmations = await client.query<{ found: string | null }>(
    `select to_regclass('${PLATFORM_SCHEMA}.confirmations_never_reported')::text as found`,
  );
  const views = financeViews(live, finance, confirmations.rows[0]?.found ? PLATFORM_SCHEMA : null);
  await client.query(`create schema if not exists ${finance}`);
  await client.query(
    `do $$ begin
       if not exists (select 1 from pg_roles where rolname = '${FINANCE_ROLE}') then
         create role ${FINANCE_ROLE} nologin;
       end if;
     exception when duplicate_object or unique_violation then null; -- created meanwhile by another session
     end $$`,
  );
  await client.query(`grant usage on schema ${finance} to ${FINANCE_ROLE}`);
  // Dropped first, dependants before what they read: a view bound to a renamed schema cannot always be
  // replaced in place.
  for (const view of [...views].reverse()) await client.query(`drop view if exists ${finance}.${view.name}`);
  for (const view of views) {
    await client.query(`create view ${finance}.${view.name} as ${view.sql}`);
    await client.query(`grant select on ${finance}.${view.name} to ${FINANCE_ROLE}`);
  }
  await client.query(`drop function if exists ${finance}.balances_as_of(timestamptz, timestamptz)`);
  await client.query(balancesFunction(finance));
  await client.query(
    `revoke all on function ${finance}.balances_as_of(timestamptz, timestamptz) from public`,
  );
  await client.query(
    `grant execute on function ${finance}.balances_as_of(timestamptz, timestamptz) to ${FINANCE_ROLE}`,
  );
}

/**
 * `db migrate`'s step: the finance views over `live`, in one transaction, serialised with other migrating
 * processes by an advisory lock.
 */
export async function migrateFinanceViews(
  databaseUrl: string,
  live: string,
  finance = FINANCE_SCHEMA,
): Promise<void> {
  const client = await connectClient(databaseUrl, { application_name: 'swap-ledger-migrate' });
  try {
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('swap-ledger:migrate:finance'))`);
    await ensureFinanceViews(client, live, finance);
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
}
