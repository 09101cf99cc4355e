import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SwapEvent } from '../events/types.ts';
import { DEFAULT_STATEMENT_LAYOUT } from '../monthend/layout.ts';
import { Decimal, formatDecimal } from '../money/decimal.ts';
import type { Logger } from '../observability/log.ts';
import { statementImportEvent } from '../ops/statements.ts';
import type { DirectionalTolerance, FeeKind } from '../money/tolerance.ts';
import type { SimSwapView } from '../simulator/index.ts';

/** The month (UTC) a time falls in: YYYY-MM. */
export const periodOf = (iso: string) => iso.slice(0, 7);

export interface DemoStatement {
  readonly csv: string;
  /** What the partner got wrong, on purpose: the swap it forgot, the fee it rounded, the swap it invented. */
  readonly forgot: string;
  readonly rounded: string | undefined;
  readonly invented: string;
}

/**
 * The demo partner's monthly statement (the README's default layout) of its FINISHED swaps final in `period`,
 * with three honest differences: the first swap left out, one provider fee rounded to two decimals, and a
 * swap the platform never saw. Undefined below `minSwaps` (at least three: one to leave out, two to match).
 */
export function demoStatement(
  swaps: readonly SimSwapView[],
  period: string,
  platformIds: Readonly<Record<string, string>>,
  invented: string = randomUUID(),
  minSwaps = 3,
): DemoStatement | undefined {
  const finishedAt = (s: SimSwapView) => s.history.at(-1)?.at ?? s.createdAt;
  const finished = swaps.filter(
    (s) => s.final && s.status === 'FINISHED' && periodOf(finishedAt(s)) === period,
  );
  if (finished.length < Math.max(3, minSwaps)) return undefined;
  const [forgot, ...listed] = finished;
  const rounded = listed.find((s) => {
    const fee = s.report.providerFees;
    return typeof fee === 'string' && new Decimal(fee).decimalPlaces() > 2;
  });
  const c = DEFAULT_STATEMENT_LAYOUT.columns;
  const header = [
    c.swapId,
    c.status,
    c.finishedAt,
    c.currencyFrom,
    c.amountFrom,
    c.currencyTo,
    c.amountTo,
    c.providerFee,
    c.referralFee,
    c.payoutNetworkFee,
  ];
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  /** A swap's line; the invented one copies the last real line's figures under another id. */
  const line = (s: SimSwapView, swapId = s.swapId) => {
    const fee = text(s.report.providerFees);
    return [
      swapId,
      'FINISHED',
      finishedAt(s),
      platformIds[s.currencyFrom] ?? s.currencyFrom.toUpperCase(),
      s.amountFrom,
      platformIds[s.currencyTo] ?? s.currencyTo.toUpperCase(),
      text(s.report.amount),
      s === rounded && swapId === s.swapId
        ? formatDecimal(new Decimal(fee).toDecimalPlaces(2, Decimal.ROUND_HALF_UP))
        : fee,
      text(s.report.referralFees),
      text(s.report.payoutNetworkFees),
    ];
  };
  const rows = [...listed.map((s) => line(s)), line(listed.at(-1)!, invented)];
  return {
    csv: [header, ...rows].map((r) => r.join(',')).join('\n') + '\n',
    forgot: forgot!.swapId,
    rounded: rounded?.swapId,
    invented,
  };
}

export interface DemoStatementImportOptions {
  /** Searches the projection schema. */
  readonly pool: pg.Pool;
  readonly append: (event: SwapEvent) => Promise<void>;
  readonly providerId: string;
  readonly swaps: () => readonly SimSwapView[];
  readonly platformIds: Readonly<Record<string, string>>;
  readonly fees: Readonly<Record<FeeKind, DirectionalTolerance>>;
  readonly logger: Logger;
}

/**
 * Imports the demo partner's statement of this month once, as `statement import` would, when the partner
 * has made enough FINISHED swaps and the ledger has folded each of them (a swap made final a moment ago
 * would read as "in the statement only" and be no honest difference). True once imported.
 */
export async function importDemoStatement(options: DemoStatementImportOptions): Promise<boolean> {
  const period = periodOf(new Date().toISOString());
  const made = options.swaps();
  const folded = await options.pool.query<{ swap_id: string }>(
    `select swap_id from swaps where provider_id = $1 and swap_id = any($2) and final`,
    [options.providerId, made.map((s) => s.swapId)],
  );
  const inLedger = new Set(folded.rows.map((r) => r.swap_id));
  const statement = demoStatement(
    made.filter((s) => inLedger.has(s.swapId)),
    period,
    options.platformIds,
    randomUUID(),
    6,
  );
  if (!statement) return false;
  const { event, counts } = await statementImportEvent(options.pool, {
    providerId: options.providerId,
    period,
    fileName: `demo-partner-statement-${period}.csv`,
    bytes: Buffer.from(statement.csv),
    layout: DEFAULT_STATEMENT_LAYOUT,
    layoutName: 'default',
    mappings: { currencies: options.platformIds },
    fees: options.fees,
    by: 'demo-ops-ana',
    reason: "the demo partner's monthly statement",
  });
  await options.append(event);
  options.logger.info({ period, counts, ...statement, csv: undefined }, "demo partner's statement imported");
  return true;
}
