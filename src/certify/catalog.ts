import { parseDecimal } from '../money/decimal.ts';
import { PartnerResponseError } from '../partner/errors.ts';
import type { PartnerOperation } from '../partner/types.ts';
import { validateCurrency, validatePair } from '../partner/validate.ts';
import { type ValidationContext } from '../partner/checker.ts';
import type { CertifyContext } from './context.ts';
import { okObject, type Exchange } from './http.ts';
import { fail, show, warn, type Problem, type Requirement } from './requirement.ts';

/** Catalog requirements: every page of /currencies and /pairs, cursor rules, currency and pair rules. */

const MAX_PAGES = 1000;

export interface PageSeen {
  /** Cursor sent (undefined on the first page). */
  readonly cursor: string | undefined;
  readonly items: number;
  readonly next: string | null;
}

/** The page envelope: a JSON object with an array under `key` and `next_cursor` (string or null). */
export function pageProblems(ex: Exchange, key: string): Problem[] {
  const ok = okObject(ex);
  if ('problem' in ok) return [fail(`page of ${key}`, 'HTTP 200 with a JSON object', ok.problem)];
  const out: Problem[] = [];
  if (!Array.isArray(ok.body[key])) out.push(fail(`${key} of the page`, 'an array', show(ok.body[key])));
  if (!('next_cursor' in ok.body))
    out.push(fail('next_cursor', 'a string, or null on the last page', 'absent'));
  else {
    const next = ok.body.next_cursor;
    if (next !== null && (typeof next !== 'string' || next === ''))
      out.push(fail('next_cursor', 'a non-empty string or null', show(next)));
  }
  return out;
}

/** Cursor rules over a whole walk: a cursor never repeats, the last page has null, `limit` is honoured. */
export function cursorProblems(
  pages: readonly PageSeen[],
  limit: number | undefined,
  ended: boolean,
): Problem[] {
  const out: ItemProblem[] = [];
  const seen = new Set<string>();
  pages.forEach((p, i) => {
    if (p.next !== null) {
      if (seen.has(p.next) || p.next === p.cursor)
        out.push(
          fail(`next_cursor of page ${i + 1}`, 'a cursor not returned before', `${show(p.next)} again`),
        );
      seen.add(p.next);
    }
    if (limit !== undefined && p.items > limit)
      out.push(fail(`items on page ${i + 1}`, `at most limit=${limit}`, String(p.items)));
  });
  if (!ended)
    out.push(
      fail('end of the list', 'next_cursor null on the last page', `still set after ${pages.length} pages`),
    );
  return out;
}

/** A problem of one list item; `index` finds the page (exchange) it came on. */
export type ItemProblem = Problem & { readonly index?: number };

function itemProblem(e: unknown, index: number): ItemProblem {
  if (e instanceof PartnerResponseError) return { ...fail(e.field || 'item', undefined, e.reason), index };
  throw e;
}

/** Currency rules (type, blockchain or chainId, contract only for tokens), via the client's own validator. */
export function currencyProblems(items: readonly unknown[], provider: string): ItemProblem[] {
  const ctx: ValidationContext = { provider, operation: 'currencies' };
  const out: ItemProblem[] = [];
  const ids = new Set<string>();
  items.forEach((item, i) => {
    try {
      const c = validateCurrency(item, `currencies[${i}]`, ctx);
      if (ids.has(c.id))
        out.push({ ...fail(`currencies[${i}].id`, 'unique ids', `${show(c.id)} twice`), index: i });
      ids.add(c.id);
    } catch (e) {
      out.push(itemProblem(e, i));
    }
  });
  return out;
}

/** Pair rules: trade methods, decimal min and max with min < max (validatePair), and no duplicates. */
export function pairProblems(items: readonly unknown[], provider: string): ItemProblem[] {
  const ctx: ValidationContext = { provider, operation: 'pairs' };
  const out: ItemProblem[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    try {
      const p = validatePair(item, `pairs[${i}]`, ctx);
      if (parseDecimal(p.minSwapAmount).eq(parseDecimal(p.maxSwapAmount)))
        out.push({
          ...warn(
            `pairs[${i}] ${p.from}/${p.to}`,
            'minSwapAmount below maxSwapAmount',
            `both ${p.minSwapAmount}`,
          ),
          index: i,
        });
      const key = `${p.from}/${p.to}`;
      if (seen.has(key)) out.push({ ...warn(`pairs[${i}]`, 'each pair once', `${key} repeated`), index: i });
      seen.add(key);
    } catch (e) {
      out.push(itemProblem(e, i));
    }
  });
  return out;
}

/** Every currency the partner lists maps to a platform currency id in the registry entry. */
export function unmappedProblems(
  items: readonly unknown[],
  map: Readonly<Record<string, string>>,
): Problem[] {
  const ids = idsOf(items, 'id');
  const missing = ids.filter((id) => map[id] === undefined);
  return missing.length === 0
    ? []
    : [
        fail(
          'currency mapping',
          'every partner currency id in the registry currencies map',
          `unmapped: ${missing.join(', ')}`,
        ),
      ];
}

/** Pairs name currencies of /currencies. */
export function unknownPairCurrencyProblems(
  pairs: readonly unknown[],
  currencies: readonly unknown[],
): Problem[] {
  const known = new Set(idsOf(currencies, 'id'));
  const out: Problem[] = [];
  pairs.forEach((p, i) => {
    const o = p as Record<string, unknown> | null;
    for (const side of ['from', 'to'] as const) {
      const id = o?.[side];
      if (typeof id === 'string' && !known.has(id))
        out.push(fail(`pairs[${i}].${side}`, 'a currency of /currencies', show(id)));
    }
  });
  return out;
}

function idsOf(items: readonly unknown[], key: string): string[] {
  return items
    .map((i) => (typeof i === 'object' && i !== null ? (i as Record<string, unknown>)[key] : undefined))
    .filter((v): v is string => typeof v === 'string' && v !== '');
}

/** A list as read: its items, the page each came on, and whether the walk reached next_cursor null. */
interface ListRead {
  readonly items: unknown[];
  readonly pageOf: Exchange[];
  readonly complete: boolean;
}

/** Reads every page of a list; judges the envelope and the cursor rules. undefined: not even page 1. */
async function walk(
  ctx: CertifyContext,
  op: Extract<PartnerOperation, 'currencies' | 'pairs'>,
  pagesReq: Requirement,
  cursorReq: Requirement,
): Promise<ListRead | undefined> {
  const limit = ctx.options.pageLimit ?? ctx.target.pageLimit ?? 50;
  const pages: PageSeen[] = [];
  const items: unknown[] = [];
  const pageOf: Exchange[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let last: Exchange | undefined;
  for (let n = 1; n <= MAX_PAGES; n++) {
    const query: Record<string, string> = { limit: String(limit) };
    if (cursor !== undefined) query.cursor = cursor;
    const ex = await ctx.http.call('GET', `/${op}`, { query });
    last = ex;
    const problems = pageProblems(ex, op);
    if (problems.length > 0) {
      pagesReq.judge(problems, '', ex);
      cursorReq.skip(`page ${n} of /${op} could not be read`);
      return n === 1 ? undefined : { items, pageOf, complete: false };
    }
    const body = ex.json as Record<string, unknown>;
    const pageItems = body[op] as unknown[];
    const next = body.next_cursor as string | null;
    items.push(...pageItems);
    pageOf.push(...pageItems.map(() => ex));
    pages.push({ cursor, items: pageItems.length, next });
    if (next === null) break;
    if (cursors.has(next) || next === cursor) break; // the cursor rule reports it; stop the loop
    cursors.add(next);
    cursor = next;
  }
  const ended = pages.at(-1)?.next === null;
  pagesReq.pass(`${pages.length} page(s), ${items.length} item(s) read`, last);
  cursorReq.judge(
    cursorProblems(pages, limit, ended || pages.length < MAX_PAGES),
    `limit=${limit} honoured on ${pages.length} page(s), cursors distinct, last next_cursor null`,
    last,
  );
  return { items, pageOf, complete: ended };
}

/** Judges item problems, each with the page it came on as evidence. */
function judgeItems(
  req: Requirement,
  problems: readonly ItemProblem[],
  read: ListRead,
  passed: string,
): void {
  if (problems.length === 0) return req.pass(passed, read.pageOf.at(-1));
  for (const { index, ...p } of problems)
    req.problem(p, index === undefined ? undefined : read.pageOf[index]);
}

export async function certifyCatalog(ctx: CertifyContext): Promise<void> {
  const provider = ctx.target.providerId;
  const cPages = ctx.requirement(
    'catalog.currencies.pages',
    'catalog',
    'GET /currencies: every page answers 200 with currencies and next_cursor',
  );
  const cCursor = ctx.requirement(
    'catalog.currencies.cursor',
    'catalog',
    'GET /currencies: cursor rules (null ends, no repeats, limit honoured)',
  );
  const cRules = ctx.requirement(
    'catalog.currencies.rules',
    'catalog',
    'currencies: type coin|token, blockchain or chainId, contract only for tokens',
  );
  const cMapped = ctx.requirement(
    'catalog.currencies.mapped',
    'catalog',
    'currencies: every currency maps to a platform currency id',
  );
  const pPages = ctx.requirement(
    'catalog.pairs.pages',
    'catalog',
    'GET /pairs: every page answers 200 with pairs and next_cursor',
  );
  const pCursor = ctx.requirement(
    'catalog.pairs.cursor',
    'catalog',
    'GET /pairs: cursor rules (null ends, no repeats, limit honoured)',
  );
  const pRules = ctx.requirement(
    'catalog.pairs.rules',
    'catalog',
    'pairs: tradeMethod fixed|float, decimal minSwapAmount < maxSwapAmount',
  );
  const pKnown = ctx.requirement(
    'catalog.pairs.currencies',
    'catalog',
    'pairs: name currencies of /currencies',
  );

  const currencies = await walk(ctx, 'currencies', cPages, cCursor);
  if (currencies) {
    ctx.currencies = currencies.items.filter(
      (c): c is Record<string, unknown> => typeof c === 'object' && c !== null,
    );
    const n = currencies.items.length;
    judgeItems(
      cRules,
      currencyProblems(currencies.items, provider),
      currencies,
      `${n} currencies follow the rules`,
    );
    cMapped.judge(
      unmappedProblems(currencies.items, ctx.target.currencies),
      `${n} currencies mapped to platform ids`,
      currencies.pageOf.at(-1),
    );
  } else {
    for (const r of [cRules, cMapped]) r.skip('no page of /currencies could be read');
  }

  const pairs = await walk(ctx, 'pairs', pPages, pCursor);
  if (pairs) {
    ctx.pairs = pairs.items.filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null);
    judgeItems(
      pRules,
      pairProblems(pairs.items, provider),
      pairs,
      `${pairs.items.length} pairs follow the rules`,
    );
    if (currencies?.complete)
      pKnown.judge(
        unknownPairCurrencyProblems(pairs.items, currencies.items),
        `${pairs.items.length} pairs name listed currencies`,
        pairs.pageOf.at(-1),
      );
    else pKnown.skip('the currency list could not be read whole');
  } else {
    for (const r of [pRules, pKnown]) r.skip('no page of /pairs could be read');
  }
}
