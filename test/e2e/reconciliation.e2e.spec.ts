import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import {
  FINAL_STATUS_FAULTS,
  PAYLOAD_FAULTS,
  type FinalStatusFault,
  type PayloadFault,
  type SwapFault,
} from '../../src/simulator/index.ts';
import { testStack } from '../support/context.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  type Platform,
} from '../gateway/support.ts';

/** The check that must report each injected fault, and how (chain faults: test/demo, on a real chain). */
const EXPECTED: Record<
  PayloadFault | FinalStatusFault,
  { check: string; verdict: 'MISMATCH' | 'UNVERIFIABLE' }
> = {
  'wrong-nonce': { check: 'payload.device_transaction_id_ng', verdict: 'MISMATCH' },
  'wrong-currency-from': { check: 'payload.currency_from', verdict: 'MISMATCH' },
  'wrong-currency-to': { check: 'payload.currency_to', verdict: 'MISMATCH' },
  'wrong-payin-address': { check: 'payload.payin_address', verdict: 'MISMATCH' },
  'wrong-payout-address': { check: 'payload.payout_address', verdict: 'MISMATCH' },
  'wrong-refund-address': { check: 'payload.refund_address', verdict: 'MISMATCH' },
  'wrong-source-amount': { check: 'payload.amount_to_provider', verdict: 'MISMATCH' },
  'wrong-destination-amount': { check: 'amount.to_wallet', verdict: 'MISMATCH' },
  'invalid-signature': { check: 'signature.valid', verdict: 'MISMATCH' },
  'final-amount-below-signed': { check: 'amount.to_wallet', verdict: 'MISMATCH' },
  'fees-differ-from-creation': { check: 'fee.provider', verdict: 'MISMATCH' },
  'missing-payin-hash': { check: 'hash.payin', verdict: 'MISMATCH' },
  'missing-payout-hash': { check: 'hash.payout', verdict: 'MISMATCH' },
  'missing-final-amount': { check: 'amount.to_wallet', verdict: 'UNVERIFIABLE' },
  'network-fee-above-quote': { check: 'quote.fee.payout_network', verdict: 'MISMATCH' },
  'referral-below-quote': { check: 'quote.fee.referral', verdict: 'MISMATCH' },
  'refund-without-refund-hash': { check: 'hash.refund', verdict: 'UNVERIFIABLE' },
  'deposit-after-expiry': { check: 'hash.payin', verdict: 'MISMATCH' },
  'refund-is-payin': { check: 'hash.refund', verdict: 'MISMATCH' },
};

/** Where each swap is taken; FINISHED unless named here. */
type Kind = SwapFault | 'clean-fixed' | 'clean-float' | 'clean-refund' | 'clean-expiry';
const OUTCOME: Partial<Record<Kind, 'REFUNDED' | 'EXPIRED'>> = {
  'refund-without-refund-hash': 'REFUNDED',
  'deposit-after-expiry': 'EXPIRED',
  'refund-is-payin': 'REFUNDED',
  'clean-refund': 'REFUNDED',
  'clean-expiry': 'EXPIRED',
};

interface Check {
  name: string;
  verdict: string;
}

/**
 * Issue 9's end-to-end run: every fault of the simulator's list injected in its own swap, created through
 * the gateway, driven to its final status by webhooks and the confirming poll, folded by the projector,
 * reconciled by the reconciler from its queue. Each fault is reported by its check; no clean swap is flagged.
 */
describe('reconciliation end to end through the partner simulator', () => {
  const stack = testStack();
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let platformPool: pg.Pool;
  let reconciler: Reconciler;
  const swaps = new Map<string, Kind>();

  async function createSwap(method: 'fixed' | 'float'): Promise<string> {
    const q = await api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
      ...(method === 'float' ? { tradeMethod: 'float' } : {}),
    });
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const body =
      method === 'fixed'
        ? { tradeMethod: 'fixed', quoteRef: q.body.quoteRef }
        : { tradeMethod: 'float', from: 'btc', to: 'eth', amount: '0.1', quoteRef: q.body.quoteRef };
    const s = await api(
      p,
      'POST',
      '/v1/swaps',
      { providerId: p.providerId, ...ADDRESSES, nonce: nonce(), slippage: '0.02', ...body },
      { 'idempotency-key': idempotencyKey() },
    );
    expect([201, 502], JSON.stringify(s.body)).toContain(s.status);
    return s.body.swapId as string;
  }

  beforeAll(async () => {
    log = await freshEventLog(4);
    p = await startPlatform({ label: 'recon-e2e', topic: log.topic });
    await p.poller.syncCatalogs();
    platformPool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    reconciler = new Reconciler({
      projection: p.pool,
      platform: platformPool,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger: createLogger({ level: 'silent' }),
    });

    for (const fault of [...PAYLOAD_FAULTS, ...FINAL_STATUS_FAULTS]) {
      p.sim.injectSwapFaults([fault], { nextSwaps: 1 });
      swaps.set(await createSwap('fixed'), fault);
    }
    swaps.set(await createSwap('fixed'), 'clean-fixed');
    swaps.set(await createSwap('float'), 'clean-float');
    swaps.set(await createSwap('fixed'), 'clean-refund');
    swaps.set(await createSwap('float'), 'clean-expiry');

    for (const [swapId, kind] of swaps) {
      p.sim.advance(swapId, 'PENDING');
      p.sim.advance(swapId, OUTCOME[kind] ?? 'FINISHED');
    }
    await p.sim.settled();
    // Final by webhook (or by poll where the webhook was refused, e.g. without an amount); the
    // confirming poll brings what a webhook cannot carry.
    await eventually(
      'every swap ended (final, or closed) in the projection',
      async () => {
        await p.poller.tick();
        const r = await p.pool.query(
          `select count(*)::int as n from swaps where status_class <> 'open' and swap_id = any($1)`,
          [[...swaps.keys()]],
        );
        return r.rows[0].n === swaps.size ? true : undefined;
      },
      60_000,
    );
    await p.poller.tick();
    await waitForProjection(p.pool, log.topic);
    await eventually('every swap queued for reconciliation', async () => {
      const r = await p.pool.query(
        'select count(*)::int as n from reconciliation_queue where swap_id = any($1)',
        [[...swaps.keys()]],
      );
      return r.rows[0].n === swaps.size ? true : undefined;
    });
    // The poller keeps running as in production: a swap made final by webhook is judged once its confirming
    // poll is recorded (the reconciler defers it until then), and any fill it brings queues it again.
    await eventually(
      'every swap reconciled on its latest figures',
      async () => {
        await p.poller.tick();
        await waitForProjection(p.pool, log.topic);
        await reconciler.drainQueue();
        await waitForProjection(p.pool, log.topic);
        const r = await p.pool.query(
          `select count(*) filter (where r.swap_id is not null)::int as judged, count(q.swap_id)::int as queued
           from swaps s left join reconciliations r using (provider_id, swap_id)
           left join reconciliation_queue q using (provider_id, swap_id) where s.swap_id = any($1)`,
          [[...swaps.keys()]],
        );
        return r.rows[0].judged === swaps.size && r.rows[0].queued === 0 ? true : undefined;
      },
      60_000,
    );
  }, 240_000);

  afterAll(async () => {
    await p?.stop();
    await platformPool?.end();
    await log?.close();
  });

  async function verdictOf(swapId: string): Promise<{ verdict: string; checks: Check[] }> {
    const r = await p.pool.query('select verdict, checks from reconciliations where swap_id = $1', [swapId]);
    expect(r.rows[0], `no reconciliation for ${swaps.get(swapId)} (${swapId})`).toBeDefined();
    return r.rows[0];
  }

  it('reconciles every swap from the queue, and the queue empties', async () => {
    const r = await p.pool.query('select count(*)::int as n from reconciliations where swap_id = any($1)', [
      [...swaps.keys()],
    ]);
    expect(r.rows[0].n).toBe(swaps.size);
    const q = await p.pool.query(
      'select count(*)::int as n from reconciliation_queue where swap_id = any($1)',
      [[...swaps.keys()]],
    );
    expect(q.rows[0].n).toBe(0);
  });

  for (const fault of [...PAYLOAD_FAULTS, ...FINAL_STATUS_FAULTS]) {
    it(`reports "${fault}" with ${EXPECTED[fault].check} ${EXPECTED[fault].verdict}`, async () => {
      const swapId = [...swaps].find(([, f]) => f === fault)![0];
      const { verdict, checks } = await verdictOf(swapId);
      const check = checks.find((c) => c.name === EXPECTED[fault].check);
      expect(check?.verdict, JSON.stringify(checks.filter((c) => c.verdict !== 'MATCHED'))).toBe(
        EXPECTED[fault].verdict,
      );
      expect(['MISMATCH', 'UNVERIFIABLE']).toContain(verdict);
    });
  }

  it('flags no clean swap: fixed, float, a refund and an expiry reconcile MATCHED or WITHIN_TOLERANCE', async () => {
    for (const kind of ['clean-fixed', 'clean-float', 'clean-refund', 'clean-expiry'] as const) {
      const swapId = [...swaps].find(([, f]) => f === kind)![0];
      const { verdict, checks } = await verdictOf(swapId);
      expect(
        checks.filter((c) => !['MATCHED', 'WITHIN_TOLERANCE', 'NOT_APPLICABLE'].includes(c.verdict)),
        kind,
      ).toEqual([]);
      expect(['MATCHED', 'WITHIN_TOLERANCE']).toContain(verdict);
    }
  });
});
