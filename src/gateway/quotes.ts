import type pg from 'pg';
import type { QuoteTerms } from '../events/types.ts';
import type { QuoteResponse } from '../partner/types.ts';
import type { StoredQuote } from './rules.ts';

type Db = pg.Pool | pg.ClientBase;

/** Writes the gateway's record of a quote (platform.gateway_quotes) before the wallet sees it. */
export async function saveQuote(
  db: Db,
  providerId: string,
  terms: QuoteTerms,
  response: QuoteResponse,
): Promise<void> {
  await db.query(
    `insert into platform.gateway_quotes (quote_ref, provider_id, quote_id, trade_method, currency_from,
       currency_to, amount_from, amount_to, expiry, min_slippage, max_slippage, terms, response)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      terms.quoteRef,
      providerId,
      terms.quoteId,
      terms.tradeMethod,
      terms.currencyFrom,
      terms.currencyTo,
      terms.amountFrom,
      terms.amountTo,
      terms.expiry,
      terms.minSlippage,
      terms.maxSlippage,
      JSON.stringify(terms),
      JSON.stringify(response),
    ],
  );
}

export async function readQuote(db: Db, quoteRef: string): Promise<StoredQuote | undefined> {
  const r = await db.query<{
    quote_ref: string;
    provider_id: string;
    quote_id: string | null;
    trade_method: 'fixed' | 'float';
    currency_from: string;
    currency_to: string;
    expiry: string | null;
    min_slippage: string | null;
    max_slippage: string | null;
    terms: QuoteTerms;
    response: QuoteResponse;
  }>(
    `select quote_ref, provider_id, quote_id, trade_method, currency_from, currency_to,
       to_char(expiry at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as expiry,
       min_slippage, max_slippage, terms, response
     from platform.gateway_quotes where quote_ref = $1`,
    [quoteRef],
  );
  // Columns mapped by hand, as every platform read (idempotency.ts, catalog/store.ts).
  const row = r.rows[0];
  return (
    row && {
      quoteRef: row.quote_ref,
      providerId: row.provider_id,
      quoteId: row.quote_id,
      tradeMethod: row.trade_method,
      from: row.currency_from,
      to: row.currency_to,
      expiry: row.expiry,
      minSlippage: row.min_slippage,
      maxSlippage: row.max_slippage,
      terms: row.terms,
      response: row.response,
    }
  );
}
