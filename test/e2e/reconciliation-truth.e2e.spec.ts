import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Decimal, formatDecimal } from '../../src/money/decimal.ts';
import { createLogger } from '../../src/observability/log.ts';
import {
  parseReconciliationPolicy,
  Reconciler,
  type ReconciliationPolicy,
} from '../../src/reconciler/index.ts';
import { testStack } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import { createSwapViaGateway, eventually, startPlatform, type Platform } from '../gateway/support.ts';

interface Check {
  name: string;
  verdict: string;
  expected: string | null;
  actual: string | null;
}

/**
 * Issue 14 end to end through the partner simulator: the verdict proves what the user got. Each swap is
 * created through the gateway, made final by webhook (which carries no payout network fee), confirmed by
 * the poller's GET /status, folded, and reconciled from the queue on its latest figures.
 */
describe('reconciliation proves what the user got (end to end)', () => {
  const stack = testStack();
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let platformPool: pg.Pool;

  const reconcilerWith = (policy: ReconciliationPolicy) =>
    new Reconciler({
      projection: p.pool,
      platform: platformPool,
      appender: log.appender,
      policy,
      logger: createLogger({ level: 'silent' }),
    });
  const exact = () => reconcilerWith(parseReconciliationPolicy({}));

  async function created(swapId: string) {
    await waitForProjection(p.pool, log.topic);
    return (
      await p.pool.query(
        `select quoted_amount_to, created_provider_fees, created_referral_fees, created_payout_network_fees
         from swaps where provider_id = $1 and swap_id = $2`,
        [p.providerId, swapId],
      )
    ).rows[0] as Record<string, string>;
  }

  /** Final by webhook with the given figures, then the confirming poll and the reconciler, as in production. */
  async function finishAndJudge(
    swapId: string,
    figures: Record<string, string>,
    reconciler: Reconciler,
  ): Promise<{ verdict: string; checks: Check[]; basedOn: string }> {
    p.sim.advance(swapId, 'FINISHED', figures);
    await p.sim.settled();
    return eventually(
      'a verdict on the confirmed figures',
      async () => {
        await p.poller.tick();
        await waitForProjection(p.pool, log.topic);
        await reconciler.drainQueue();
        await waitForProjection(p.pool, log.topic);
        const r = await p.pool.query(
          `select r.verdict, r.checks, r.based_on_event_id,
             exists (select 1 from reconciliation_queue q where q.provider_id = r.provider_id and q.swap_id = r.swap_id) as queued,
             exists (select 1 from platform.poll_confirmations c where c.provider_id = r.provider_id and c.swap_id = r.swap_id) as confirmed
           from reconciliations r where r.provider_id = $1 and r.swap_id = $2`,
          [p.providerId, swapId],
        );
        const row = r.rows[0];
        return row && row.confirmed && !row.queued
          ? { verdict: row.verdict, checks: row.checks as Check[], basedOn: row.based_on_event_id as string }
          : undefined;
      },
      30_000,
    );
  }

  const check = (checks: Check[], name: string) => checks.find((c) => c.name === name)!;

  beforeAll(async () => {
    log = await freshEventLog(4);
    p = await startPlatform({ label: 'recon-truth', topic: log.topic });
    await p.poller.syncCatalogs();
    platformPool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await platformPool?.end();
    await log?.close();
  });

  it('final by webhook, fees by the confirming poll: MATCHED, judged on the poll that filled them', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    const { verdict, checks, basedOn } = await finishAndJudge(swapId, {}, exact());
    expect(checks.filter((c) => c.verdict !== 'MATCHED' && c.verdict !== 'NOT_APPLICABLE')).toEqual([]);
    expect(verdict).toBe('MATCHED');
    const source = await p.pool.query('select source from event_journal where event_id = $1', [basedOn]);
    expect(source.rows[0].source).toBe('poll');
  });

  it('the payout 10% short: MISMATCH on the user-side amount check', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    const c = await created(swapId);
    const short = formatDecimal(new Decimal(c.quoted_amount_to!).times('0.9'));
    const { verdict, checks } = await finishAndJudge(swapId, { amount: short }, exact());
    expect(verdict).toBe('MISMATCH');
    expect(check(checks, 'amount.to_wallet')).toMatchObject({ verdict: 'MISMATCH', actual: short });
  });

  it('value moved from the amount to the network fee: MISMATCH even with a generous network-fee tolerance', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    const c = await created(swapId);
    const moved = new Decimal(c.quoted_amount_to!).times('0.1');
    const figures = {
      amount: formatDecimal(new Decimal(c.quoted_amount_to!).minus(moved)),
      payoutNetworkFees: formatDecimal(new Decimal(c.created_payout_network_fees!).plus(moved)),
    };
    const lenient = reconcilerWith(
      parseReconciliationPolicy({
        RECONCILE_PAYOUT_NETWORK_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '1',
        RECONCILE_PAYOUT_NETWORK_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '1000',
        RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '1000',
      }),
    );
    const { verdict, checks } = await finishAndJudge(swapId, figures, lenient);
    expect(verdict).toBe('MISMATCH');
    expect(check(checks, 'amount.to_wallet').verdict).toBe('MISMATCH');
    // The partner's gross output is whole: only the user-side check can see where the value went.
    expect(check(checks, 'amount.partner_side').verdict).toBe('MATCHED');
  });

  it('a fee estimate known before the final webhook is still confirmed, and the fee actually charged is judged', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    const c = await created(swapId);
    // A pending poll brings the partner's estimate first.
    p.sim.advance(
      swapId,
      'PENDING',
      { payoutNetworkFees: c.created_payout_network_fees! },
      { notify: false },
    );
    await eventually('the estimate in the projection', async () => {
      await p.poller.tick();
      await waitForProjection(p.pool, log.topic);
      const r = await p.pool.query(
        'select payout_network_fees from swaps where provider_id = $1 and swap_id = $2',
        [p.providerId, swapId],
      );
      return r.rows[0]?.payout_network_fees !== null ? true : undefined;
    });
    const charged = formatDecimal(new Decimal(c.created_payout_network_fees!).times(2));
    const { checks } = await finishAndJudge(swapId, { payoutNetworkFees: charged }, exact());
    expect(check(checks, 'fee.payout_network')).toMatchObject({ verdict: 'MISMATCH', actual: charged });
    expect(check(checks, 'status.conflict').verdict).toBe('MATCHED'); // a fill of the final figure, no conflict
  });

  it('referral halved, provider fee raised by as much: MISMATCH with 0.5 relative tolerance in the platform’s favour only', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    const c = await created(swapId);
    const half = new Decimal(c.created_referral_fees!).div(2);
    const figures = {
      referralFees: formatDecimal(half),
      providerFees: formatDecimal(new Decimal(c.created_provider_fees!).plus(half)),
    };
    const favourOnly = reconcilerWith(
      parseReconciliationPolicy({ RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5' }),
    );
    const { verdict, checks } = await finishAndJudge(swapId, figures, favourOnly);
    expect(verdict).toBe('MISMATCH');
    expect(check(checks, 'fee.referral').verdict).toBe('MISMATCH');
    expect(check(checks, 'fee.provider').verdict).toBe('MISMATCH');
    expect(check(checks, 'fee.sum').verdict).toBe('MATCHED');
  });
});
