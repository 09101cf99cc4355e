// Issue 41, findings 1, 7 and 8 on the real stack (partner simulator, webhook server, gateway, poller,
// projector, reconciler; Kafka, registry, Postgres): each `expect` on a verdict failed on the code before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import type { SwapFault } from '../../src/simulator/index.ts';
import { testStack } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import {
  ADDRESSES,
  api,
  createSwapViaGateway,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  swapRow,
  type Platform,
} from '../gateway/support.ts';

interface Check {
  name: string;
  verdict: string;
  expected: string | null;
  actual: string | null;
  detail: string | null;
}

/**
 * The provider entry says nothing of webhookNetworkFees (the default: read by evidence), and the partner
 * (the simulator) puts its referral fee in the webhook's networkFees, as the interface allows.
 */
describe('fee and quote verdicts no partner can game (real stack)', () => {
  const stack = testStack();
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let platformPool: pg.Pool;
  let reconciler: Reconciler;

  beforeAll(async () => {
    log = await freshEventLog(4);
    p = await startPlatform({ label: 'fee-verdicts', topic: log.topic });
    await p.poller.syncCatalogs();
    platformPool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    reconciler = new Reconciler({
      projection: p.pool,
      platform: platformPool,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'silent' }),
    });
  }, 120_000);

  afterAll(async () => {
    await reconciler?.stop();
    await p?.stop();
    await platformPool?.end();
    await log?.close();
  });

  /** Final by webhook, confirmed by the poller's GET /status, folded and judged from the queue. */
  async function finishAndJudge(swapId: string, figures: Record<string, string> = {}) {
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
          `select r.verdict, r.checks,
             exists (select 1 from reconciliation_queue q where q.provider_id = r.provider_id and q.swap_id = r.swap_id) as queued,
             exists (select 1 from platform.poll_confirmations c where c.provider_id = r.provider_id and c.swap_id = r.swap_id) as confirmed
           from reconciliations r where r.provider_id = $1 and r.swap_id = $2`,
          [p.providerId, swapId],
        );
        const row = r.rows[0];
        return row && row.confirmed && !row.queued
          ? { verdict: row.verdict as string, checks: row.checks as Check[] }
          : undefined;
      },
      30_000,
    );
  }
  const check = (checks: Check[], name: string) => checks.find((c) => c.name === name)!;
  const failing = (checks: Check[]) =>
    checks.filter((c) => c.verdict !== 'MATCHED' && c.verdict !== 'NOT_APPLICABLE').map((c) => c.name);

  /** A float swap the wallet makes without a quote (POST /v1/swaps with from, to and amount only). */
  const floatWithoutQuote = (fault?: SwapFault) => {
    if (fault) p.sim.injectSwapFaults([fault], { nextSwaps: 1 });
    return api(
      p,
      'POST',
      '/v1/swaps',
      {
        providerId: p.providerId,
        tradeMethod: 'float',
        from: 'btc',
        to: 'eth',
        amount: '0.1',
        slippage: '0.02',
        ...ADDRESSES,
        nonce: nonce(),
      },
      { 'idempotency-key': idempotencyKey() },
    );
  };

  it('clean swaps whose webhook carries the referral fee in networkFees are MATCHED, fixed and float', async () => {
    for (const method of ['fixed', 'float'] as const) {
      const swapId = await createSwapViaGateway(p, method, { slippage: '0.02' });
      const { verdict, checks } = await finishAndJudge(swapId);
      expect(failing(checks), method).toEqual([]);
      expect(verdict).toBe('MATCHED');
      const referral = (p.sim.swap(swapId)!.report as Record<string, string>).referralFees;
      expect(check(checks, 'fee.extra')).toMatchObject({ verdict: 'MATCHED', actual: '0' });
      expect(check(checks, 'fee.extra').detail).toContain(`networkFees ${referral} equals`);
      // Read by evidence, kept as sent; the revenue is the confirmed referralFees.
      expect(await swapRow(p.pool, swapId)).toMatchObject({
        webhook_network_fees: referral,
        referral_fees: referral,
      });
    }
  });

  it('a webhook networkFees above the referral fee: the extra part is a fee.extra MISMATCH', async () => {
    const swapId = await createSwapViaGateway(p, 'fixed', { slippage: '0.02' });
    p.sim.injectSwapFaults(['extra-fee-in-network-fees'], { swapId });
    const referral = (p.sim.swap(swapId)!.report as Record<string, string>).referralFees!;
    const { verdict, checks } = await finishAndJudge(swapId);
    expect(verdict).toBe('MISMATCH');
    expect(failing(checks)).toEqual(['fee.extra']);
    expect(check(checks, 'fee.extra')).toMatchObject({
      verdict: 'MISMATCH',
      expected: '0',
      actual: referral,
    });
    expect(check(checks, 'fee.referral')).toMatchObject({ verdict: 'MATCHED', actual: referral });
  });

  it('a float swap sent without a quote: the gateway asks one, records QuoteReceived, and the swap is judged against it', async () => {
    const quotes = p.sim.calls('quote').length;
    const clean = await floatWithoutQuote();
    expect(clean.status).toBe(201);
    expect(p.sim.calls('quote').length).toBe(quotes + 1);
    const cleanId = clean.body.swapId as string;
    await waitForProjection(p.pool, log.topic);
    const row = await swapRow(p.pool, cleanId);
    expect(row?.quote_ref).toBeTruthy();
    const recorded = await p.pool.query(
      `select outcome, trade_method from quotes where quote_ref = $1 and provider_id = $2`,
      [row!.quote_ref, p.providerId],
    );
    expect(recorded.rows).toEqual([{ outcome: 'received', trade_method: 'float' }]);
    const judged = await finishAndJudge(cleanId);
    expect(failing(judged.checks)).toEqual([]);
    expect(check(judged.checks, 'quote.fee.payout_network').verdict).toBe('MATCHED');

    // The partner states five times the quoted network fee at creation and pays as much less: the
    // payload still signs the quoted output, so the partner side balances; the quote catches it.
    const inflated = await floatWithoutQuote('network-fee-above-quote');
    expect(inflated.status).toBe(201);
    const { verdict, checks } = await finishAndJudge(inflated.body.swapId as string);
    expect(verdict).toBe('MISMATCH');
    expect(check(checks, 'quote.fee.payout_network').verdict).toBe('MISMATCH');
    // The user side expects the lower (quoted) estimate; here the shortfall fits the agreed 2% slippage.
    expect(check(checks, 'amount.to_wallet').detail).toContain("the quote's payout network fee");
    expect(check(checks, 'amount.partner_side').verdict).toBe('MATCHED');
  });

  it('a quoted figure with more decimals than its currency has: refused, recorded, and no swap is made', async () => {
    const overPrecise = {
      kind: 'malformed-body',
      variant: 'set-field',
      field: 'payoutNetworkFees',
      value: '0.0020000000000000001', // ETH has 18 decimals
    } as const;
    p.sim.injectFault('quote', overPrecise);
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
    });
    expect(q.status).toBe(502);
    expect(String(q.body.error)).toContain('payoutNetworkFees');

    const swaps = p.sim.calls('swap-float').length;
    p.sim.injectFault('quote', overPrecise);
    const s = await floatWithoutQuote();
    expect(s.status).toBe(502);
    expect(p.sim.calls('swap-float').length).toBe(swaps);
    await waitForProjection(p.pool, log.topic);
    const rejected = await p.pool.query(
      `select count(*)::int as n from quotes where provider_id = $1 and outcome = 'rejected' and error_message like '%decimal places%'`,
      [p.providerId],
    );
    expect(rejected.rows[0].n).toBe(2);
  });
});
