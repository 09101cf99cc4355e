import type { ConsoleDb } from '../db.ts';
import { badge, html, swapLink, table, time, type Html } from '../html.ts';
import { amount } from '../amount.ts';
import { CREATED_STATUS, ENDED_STATUSES, INTERNAL_STATUSES, LIFECYCLE_ORDER } from '../../swap/status.ts';
import { NOT_APPLICABLE, VERDICT_ORDER } from '../../reconciler/types.ts';

/**
 * The statuses a projected swap can have: the fold's own CREATED (no report yet) and the internal statuses
 * (src/swap/status.ts), and nothing else.
 */
export const STATUSES: readonly string[] = [
  CREATED_STATUS,
  ...LIFECYCLE_ORDER,
  ...INTERNAL_STATUSES.filter((s) => !LIFECYCLE_ORDER.includes(s)),
];

/**
 * The verdict filter: a swap's current verdict, `none` (not reconciled yet), or NOT_APPLICABLE, which
 * finds the swaps with at least one check that does not apply to their outcome (a swap's own verdict is
 * never NOT_APPLICABLE: such checks never count).
 */
export const VERDICTS: readonly string[] = [...VERDICT_ORDER, 'none', NOT_APPLICABLE];
const VERDICT_LABELS: Record<string, string> = {
  none: 'none (not reconciled)',
  [NOT_APPLICABLE]: 'has a NOT_APPLICABLE check',
};
export const AGES: Record<string, string> = {
  '1h': '1 hour',
  '24h': '1 day',
  '7d': '7 days',
  '30d': '30 days',
};

export interface SwapFilters {
  q?: string;
  status?: string;
  verdict?: string;
  partner?: string;
  pair?: string;
  age?: string;
}

/** Only known values pass: a filter the console does not offer is ignored, never put into SQL. */
export function cleanFilters(query: Record<string, unknown>): SwapFilters {
  const text = (k: string, max = 200) => {
    const v = query[k];
    return typeof v === 'string' && v.trim() !== '' && v.length <= max ? v.trim() : undefined;
  };
  const out: SwapFilters = {};
  const q = text('q', 300);
  if (q) out.q = q;
  const status = text('status');
  if (status && STATUSES.includes(status)) out.status = status;
  const verdict = text('verdict');
  if (verdict && VERDICTS.includes(verdict)) out.verdict = verdict;
  const partner = text('partner', 64);
  if (partner) out.partner = partner;
  const pair = text('pair', 81);
  if (pair && /^[A-Za-z0-9._-]+-[A-Za-z0-9._-]+$/.test(pair)) out.pair = pair;
  const age = text('age');
  if (age && age in AGES) out.age = age;
  return out;
}

export interface SwapListRow {
  provider_id: string;
  swap_id: string;
  trade_method: string;
  payload_currency_from: string;
  payload_currency_to: string;
  amount_from: string | null;
  amount_to: string | null;
  status: string;
  final: boolean;
  created_at: string;
  final_at: string | null;
  verdict: string | null;
}

/**
 * Swaps matching the filters, newest first. The search box takes `provider/swapId`, a swapId, a
 * provider, an address or a transaction hash (exact match).
 */
export async function findSwaps(db: ConsoleDb, f: SwapFilters, limit = 200): Promise<SwapListRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (f.q) {
    const slash = f.q.indexOf('/');
    if (slash > 0) {
      where.push(`(s.provider_id = ${p(f.q.slice(0, slash))} and s.swap_id = ${p(f.q.slice(slash + 1))})`);
    } else {
      const v = p(f.q);
      where.push(
        `(${v} in (s.swap_id, s.provider_id, s.payin_address, s.payout_address, s.refund_address,
          s.payin_transaction_id, s.payout_transaction_id, s.request_id))`,
      );
    }
  }
  if (f.status) where.push(`s.status = ${p(f.status)}`);
  if (f.verdict === 'none') where.push('r.verdict is null');
  else if (f.verdict === NOT_APPLICABLE)
    where.push(
      `jsonb_typeof(r.checks) = 'array' and exists (select 1 from jsonb_array_elements(r.checks) c
         where c->>'verdict' = ${p(NOT_APPLICABLE)})`,
    );
  else if (f.verdict) where.push(`r.verdict = ${p(f.verdict)}`);
  if (f.partner) where.push(`s.provider_id = ${p(f.partner)}`);
  if (f.pair) {
    const [from, to] = f.pair.split('-');
    where.push(`s.payload_currency_from = ${p(from)} and s.payload_currency_to = ${p(to)}`);
  }
  if (f.age) where.push(`s.created_at >= now() - ${p(AGES[f.age])}::interval`);
  return db.query<SwapListRow>(
    `select s.provider_id, s.swap_id, s.trade_method, s.payload_currency_from, s.payload_currency_to,
       s.amount_from, s.amount_to, s.status, s.final, s.created_at, s.final_at, r.verdict
     from swaps s left join reconciliations r on r.provider_id = s.provider_id and r.swap_id = s.swap_id
     ${where.length ? `where ${where.join(' and ')}` : ''}
     order by s.created_at desc, s.provider_id, s.swap_id limit ${Number(limit)}`,
    params,
  );
}

interface Counts {
  status: string;
  verdict: string | null;
  n: string;
}

export async function swapsLive(db: ConsoleDb, f: SwapFilters): Promise<Html> {
  const [rows, counts] = await Promise.all([
    findSwaps(db, f),
    db.query<Counts>(
      `select s.status, r.verdict, count(*)::text as n
       from swaps s left join reconciliations r on r.provider_id = s.provider_id and r.swap_id = s.swap_id group by 1, 2`,
    ),
  ]);
  const sum = (pred: (c: Counts) => boolean) =>
    counts
      .filter(pred)
      .reduce((a, c) => a + BigInt(c.n), 0n)
      .toString();
  const cards: [string, string, string][] = [
    ['all swaps', sum(() => true), 'all'],
    ...ENDED_STATUSES.map(
      (s) => [s.toLowerCase(), sum((c) => c.status === s), s] as [string, string, string],
    ),
    ['open', sum((c) => !(ENDED_STATUSES as readonly string[]).includes(c.status)), 'open'],
    ['mismatches', sum((c) => c.verdict === 'MISMATCH'), 'MISMATCH'],
  ];
  return html`<div class="cards">
      ${cards.map(
        ([label, n, key]) =>
          html`<div class="card" data-count="${key}">
            <div class="n">${n}</div>
            <div class="l">${label}</div>
          </div>`,
      )}
    </div>
    <p class="muted">${rows.length} swap(s) shown${rows.length === 200 ? ' (the newest 200)' : ''}</p>
    ${table(
      ['swap', 'method', 'pair', 'amount from', 'amount to', 'status', 'verdict', 'created', 'final at'],
      rows.map((r) => [
        swapLink(r.provider_id, r.swap_id),
        r.trade_method,
        `${r.payload_currency_from} → ${r.payload_currency_to}`,
        amount(r.amount_from, r.payload_currency_from),
        amount(r.amount_to, r.payload_currency_to),
        badge(r.status),
        badge(r.verdict),
        time(r.created_at),
        time(r.final_at),
      ]),
      'no swap matches',
    )}`;
}

export async function swapsControls(db: ConsoleDb, f: SwapFilters): Promise<Html> {
  const [partners, pairs] = await Promise.all([
    db.query<{ provider_id: string }>('select distinct provider_id from swaps order by 1'),
    db.query<{ pair: string }>(
      `select distinct payload_currency_from || '-' || payload_currency_to as pair from swaps order by 1`,
    ),
  ]);
  const select = (
    name: string,
    label: string,
    values: readonly string[],
    current?: string,
    labels: Record<string, string> = {},
  ) =>
    html`<label
      >${label}<select name="${name}">
        <option value="">any</option>
        ${values.map(
          (v) =>
            html`<option value="${v}" ${v === current ? html` selected` : ''}>${labels[v] ?? v}</option>`,
        )}
      </select></label
    >`;
  return html`<form class="controls" method="get" action="/swaps">
    <label
      >search<input
        name="q"
        size="40"
        value="${f.q ?? ''}"
        placeholder="provider/swapId, swapId, address or hash"
    /></label>
    ${select('status', 'status', STATUSES, f.status)}
    ${select('verdict', 'verdict', VERDICTS, f.verdict, VERDICT_LABELS)}
    ${select(
      'partner',
      'partner',
      partners.map((p) => p.provider_id),
      f.partner,
    )}
    ${select(
      'pair',
      'pair',
      pairs.map((p) => p.pair),
      f.pair,
    )}
    ${select('age', 'created within', Object.keys(AGES), f.age)}
    <button class="primary" type="submit">Find</button> <a href="/swaps">clear</a>
  </form>`;
}
