import { Decimal } from '../../money/decimal.ts';
import type { ConsoleDb } from '../db.ts';
import { html, swapLink, table, time, type Html } from '../html.ts';
import { amount } from '../amount.ts';
import { barChart, COLOURS } from '../svg.ts';

export interface BooksQuery {
  asOf?: string;
  knownAt?: string;
}

/** `as_of` / `known_at` from the form (datetime-local, taken as UTC, or ISO with a zone); else undefined. */
export function parseInstant(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 40) return undefined;
  const v = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(v))
    return undefined;
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/.test(v) ? v : `${v.length === 10 ? `${v}T00:00` : v}Z`;
  const d = new Date(withZone.replace(' ', 'T'));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export function booksControls(q: BooksQuery): Html {
  const local = (iso?: string) => (iso ? iso.slice(0, 16) : '');
  return html`<form class="controls" method="get" action="/books">
    <label>balances as of (UTC)<input type="datetime-local" name="as_of" value="${local(q.asOf)}" /></label>
    <label
      >as known at (UTC, empty: now)<input type="datetime-local" name="known_at" value="${local(q.knownAt)}"
    /></label>
    <button class="primary" type="submit">Show</button> <a href="/books">now</a>
  </form>`;
}

export async function booksLive(db: ConsoleDb, q: BooksQuery): Promise<Html> {
  const f = db.finance;
  const [balances, revenue, volume, exceptions] = await Promise.all([
    db.financeQuery<{
      account: string;
      provider_id: string;
      currency: string;
      balance: string;
      postings: string;
    }>(
      `select account, provider_id, currency, balance::text as balance, postings::text as postings
       from ${f}.balances_as_of(coalesce($1::timestamptz, now()), $2::timestamptz)
       order by provider_id, currency, account`,
      [q.asOf ?? null, q.knownAt ?? null],
    ),
    db.financeQuery<{
      provider_id: string;
      currency: string;
      day: string;
      referral_revenue: string;
      swaps: string;
    }>(
      `select provider_id, currency, to_char(day, 'YYYY-MM-DD') as day, referral_revenue::text as referral_revenue,
         swaps::text as swaps
       from ${f}.referral_revenue_daily where day >= (now() at time zone 'UTC')::date - 30 order by day`,
    ),
    db.financeQuery<{
      provider_id: string;
      currency_from: string;
      currency_to: string;
      day: string;
      volume_from: string;
      volume_to: string;
      swaps: string;
    }>(
      `select provider_id, currency_from, currency_to, to_char(day, 'YYYY-MM-DD') as day,
         volume_from::text as volume_from, volume_to::text as volume_to, swaps::text as swaps
       from ${f}.volume_daily where day >= (now() at time zone 'UTC')::date - 30
       order by day, provider_id, currency_from, currency_to`,
    ),
    db.financeQuery<{
      swap_id: string;
      provider_id: string;
      status: string;
      final_at: string | null;
      reason: string;
    }>(
      `select swap_id, provider_id, status, final_at, reason from ${f}.ledger_exceptions
       order by final_at desc nulls last, provider_id, swap_id limit 200`,
    ),
  ]);
  const days = [...new Set([...revenue.map((r) => r.day), ...volume.map((v) => v.day)])].sort();
  const currencies = [...new Set(revenue.map((r) => r.currency))].sort();
  const revenueCharts = currencies.map((cur) =>
    barChart({
      title: `referral revenue per day, ${cur}`,
      bars: days.map((d) => ({
        label: d.slice(5),
        values: [
          revenue
            .filter((r) => r.day === d && r.currency === cur)
            .reduce((a, r) => addText(a, r.referral_revenue), '0'),
        ],
      })),
      series: [{ name: cur, colour: COLOURS[0]! }],
      width: 360,
      height: 150,
      id: `revenue-${cur}`,
    }),
  );
  const pairs = [...new Set(volume.map((v) => `${v.currency_from}→${v.currency_to}`))].sort();
  const volumeChart = barChart({
    title: 'swaps with volume per day, by pair',
    bars: days.map((d) => ({
      label: d.slice(5),
      values: pairs.map((p) =>
        volume
          .filter((v) => v.day === d && `${v.currency_from}→${v.currency_to}` === p)
          .reduce((a, v) => addText(a, v.swaps), '0'),
      ),
    })),
    series: pairs.map((p, i) => ({ name: p, colour: COLOURS[i % COLOURS.length]! })),
    id: 'volume-chart',
  });
  return html`<h2>
      Balances as of
      ${q.asOf ? time(q.asOf) : 'now'}${q.knownAt ? html`, as known at ${time(q.knownAt)}` : ''}
    </h2>
    ${table(
      ['partner', 'currency', 'account', 'balance', 'postings'],
      balances.map((b) => [
        b.provider_id,
        b.currency,
        b.account,
        amount(b.balance, b.currency, { balance: `${b.provider_id}:${b.currency}:${b.account}` }),
        b.postings,
      ]),
      'no postings at that time',
    )}
    <h2>Referral revenue per day (last 30 days)</h2>
    <div class="grid">
      ${revenueCharts.length ? revenueCharts : html`<p class="muted">no referral revenue yet</p>`}
    </div>
    <h2>Volume per day (last 30 days)</h2>
    ${volumeChart}
    ${table(
      ['day', 'partner', 'pair', 'volume from', 'volume to', 'swaps'],
      volume.map((v) => [
        v.day,
        v.provider_id,
        `${v.currency_from} → ${v.currency_to}`,
        amount(v.volume_from, v.currency_from),
        amount(v.volume_to, v.currency_to),
        v.swaps,
      ]),
      'no volume yet',
    )}
    <h2>Ledger exceptions</h2>
    ${table(
      ['swap', 'status', 'final at', 'reason'],
      exceptions.map((e) => [swapLink(e.provider_id, e.swap_id), e.status, time(e.final_at), e.reason]),
      'no exceptions: the journal carries every final swap',
    )}`;
}

/** Adds decimal texts exactly (a chart bar sums several partners' figures of one currency). */
function addText(a: string, b: string): string {
  return new Decimal(a).plus(new Decimal(b)).toFixed();
}
