import type pg from 'pg';
import { assertIdentifier } from '../db/client.ts';

export const FINANCE_SCHEMA = 'finance';
/** Read-only role for finance: it may read the finance views, nothing else. */
export const FINANCE_ROLE = 'swap_ledger_finance';

/**
 * Views for finance over the live projection. A view binds to the tables it was created over, so after
 * replay promotes a rebuilt schema these are created again over the new live tables (same SQL).
 */
export function financeViews(live: string): { name: string; sql: string }[] {
  assertIdentifier(live);
  return [
    {
      name: 'swaps',
      sql: `select swap_id, provider_id, trade_method, currency_from, currency_to, payload_currency_from,
        payload_currency_to, amount_from, quoted_amount_to, amount_to, created_provider_fees, created_referral_fees,
        created_payout_network_fees, provider_fees, referral_fees, payout_network_fees, status, final, final_at,
        corrected, created_at
        from ${live}.swaps`,
    },
    {
      name: 'open_swaps_by_age',
      sql: `select swap_id, provider_id, status, created_at, date_trunc('hour', now() - created_at) as age
        from ${live}.swaps where not final`,
    },
  ];
}

/** Creates (or re-creates over the current live tables) the finance schema, its views and grants. */
export async function ensureFinanceViews(client: pg.ClientBase, live: string): Promise<void> {
  await client.query(`create schema if not exists ${FINANCE_SCHEMA}`);
  await client.query(
    `do $$ begin
       if not exists (select 1 from pg_roles where rolname = '${FINANCE_ROLE}') then
         create role ${FINANCE_ROLE} nologin;
       end if;
     end $$`,
  );
  await client.query(`grant usage on schema ${FINANCE_SCHEMA} to ${FINANCE_ROLE}`);
  for (const view of financeViews(live)) {
    // Dropped first: a view bound to a renamed schema cannot always be replaced in place.
    await client.query(`drop view if exists ${FINANCE_SCHEMA}.${view.name}`);
    await client.query(`create view ${FINANCE_SCHEMA}.${view.name} as ${view.sql}`);
    await client.query(`grant select on ${FINANCE_SCHEMA}.${view.name} to ${FINANCE_ROLE}`);
  }
}
