import type pg from 'pg';
import type { SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import { listCases, checkCaseAction, type StoredCase } from '../ops/cases.ts';
import {
  caseActedEvent,
  correctionEvent,
  type CaseActionInput,
  type CorrectionInput,
} from '../ops/operator-events.ts';
import { isDecimalText } from '../money/decimal.ts';
import { verifyCasePayment, type ChainAccess } from '../ops/chain-payment.ts';
import { buildEvidencePack } from '../ops/evidence.ts';
import type { PartnerSimulator } from '../simulator/index.ts';
import { DEMO_CHAIN_ASSETS, isDemoChainCurrency } from './chain.ts';

/**
 * What the demo's operators do with the cases its faults open, one way each, so the console shows every
 * state: the first case acknowledged, the next disputed with its evidence pack's digest, one resolved as a
 * false alarm, one written off by two operators, one settled by the partner paying the difference on the
 * demo chain (a reference otherwise), and one whose fee the partner confirmed was wrong in its final status,
 * corrected in the ledger (`swap correct`) and resolved as corrected. The rest stay open. Each action goes the operators' way: checked
 * against the case as it stands, then appended as a CaseActed event.
 */
export const DEMO_CASE_PLAN = [
  // First: it fits only a case whose failing checks are fees, which the others would otherwise take.
  'corrected',
  'acknowledged',
  'disputed',
  'false_alarm',
  'accepted_loss',
  'partner_paid',
] as const;
export type DemoCaseStep = (typeof DEMO_CASE_PLAN)[number];

/** Fee checks of the final status a correction can settle, and the correction's field for each. */
const CORRECTABLE_FEES = {
  'fee.provider': 'providerFees',
  'fee.referral': 'referralFees',
  'fee.payout_network': 'payoutNetworkFees',
} as const;

/** A case unchanged this long is taken as settled enough to act on. */
const SETTLED_MS = 15_000;

export interface DemoOperatorsOptions {
  /** Searches the projection schema. */
  readonly pool: pg.Pool;
  readonly append: (event: SwapEvent) => Promise<void>;
  readonly providerId: string;
  readonly simulator: PartnerSimulator;
  /** Whether the demo chains run (the partner's payment of a difference is made there). */
  readonly chains: boolean;
  /** The demo chains' sources, to verify that payment as `case resolve --tx` does. */
  readonly chainAccess?: ChainAccess;
  readonly logger: Logger;
  readonly intervalMs?: number;
}

export interface RunningDemoOperators {
  stop(): Promise<void>;
}

export function startDemoOperators(options: DemoOperatorsOptions): RunningDemoOperators {
  const { pool, providerId, logger } = options;
  const taken = new Map<string, DemoCaseStep>();
  let stopped = false;

  /** The next action reads the case as the projection folds this one; a refused fold is said. */
  const awaitFold = async (c: StoredCase, eventId: string) => {
    for (let i = 0; i < 50; i++) {
      const r = await pool.query(
        `select 1 from cases where provider_id = $1 and swap_id = $2 and last_event_id = $3`,
        [c.providerId, c.swapId, eventId],
      );
      if (r.rowCount) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the case did not take ${eventId} within 10 s`);
  };

  const act = async (c: StoredCase, input: Omit<CaseActionInput, 'providerId' | 'swapId'>) => {
    const ref = { providerId: c.providerId, swapId: c.swapId };
    const event = caseActedEvent({ ...ref, ...input });
    await checkCaseAction(pool, ref, event);
    await options.append(event);
    await awaitFold(c, event.eventId);
  };

  /**
   * The partner's payment of the difference: on the demo chain when the stake's currency has one, then
   * verified there as `case resolve --tx` verifies it; an operator's bank reference otherwise.
   */
  const paidDifference = async (c: StoredCase): Promise<{ reference: string; verified?: string }> => {
    const partnerId = Object.entries(DEMO_CHAIN_ASSETS).find(([, a]) => a.platform === c.stakeCurrency)?.[0];
    if (options.chains && partnerId && isDemoChainCurrency(partnerId) && c.amountAtStake) {
      const to = await pool.query<{ payout_address: string }>(
        `select payout_address from swaps where provider_id = $1 and swap_id = $2`,
        [c.providerId, c.swapId],
      );
      const hash = await options.simulator
        .payAhead(partnerId, to.rows[0]!.payout_address, c.amountAtStake.replace(/^-/, ''))
        .catch((e: unknown) =>
          logger.warn({ err: e }, 'demo: the partner could not pay the difference on chain'),
        );
      if (hash && options.chainAccess) return verifyCasePayment(pool, options.chainAccess, c, hash);
      if (hash) return { reference: hash };
    }
    return { reference: `demo bank transfer ${c.swapId.slice(0, 8)}` };
  };

  /**
   * The ledger fields a correction sets to what the reconciler expected, when every failing check of the case
   * is a fee of the final status (a correction then makes the swap's figures the signed ones).
   */
  const feeCorrection = async (c: StoredCase) => {
    const failing = c.failing.split('|').map((f) => f.split(':')[0]!);
    // The sum and the quote's view of the same fees follow the corrected figures.
    const follows = (n: string) => n === 'fee.sum' || n.replace(/^quote\./, '') in CORRECTABLE_FEES;
    if (failing.length === 0 || !failing.every(follows)) return;
    const r = await pool.query<{ name: string; expected: string | null }>(
      `select c->>'name' as name, c->>'expected' as expected
         from reconciliations r, jsonb_array_elements(r.checks) c
        where r.provider_id = $1 and r.swap_id = $2 and c->>'name' = any($3)`,
      [c.providerId, c.swapId, failing],
    );
    const fix: Partial<CorrectionInput> = {};
    for (const row of r.rows) {
      const field = CORRECTABLE_FEES[row.name as keyof typeof CORRECTABLE_FEES];
      if (!field) continue;
      if (!row.expected || !isDecimalText(row.expected)) return;
      fix[field] = row.expected;
    }
    return Object.keys(fix).length > 0 ? fix : undefined;
  };

  const step = async (c: StoredCase, want: DemoCaseStep) => {
    const by = 'demo-ops-ana';
    switch (want) {
      case 'acknowledged':
        return act(c, { action: 'acknowledge', by, reason: 'looking at it' });
      case 'disputed': {
        const pack = await buildEvidencePack(pool, c);
        await act(c, { action: 'acknowledge', by, reason: 'looking at it' });
        return act(c, {
          action: 'dispute',
          by,
          reason: 'asked the partner with the evidence pack',
          sent: `sha256:${pack.digest.value}`,
        });
      }
      case 'false_alarm':
        return act(c, {
          action: 'resolve',
          by,
          reason: 'the demo injected this fault on purpose',
          outcome: 'false_alarm',
          setting: 'the demo fault plan (src/demo/plan.ts)',
        });
      case 'accepted_loss':
        if (!c.amountAtStake || !c.stakeCurrency) return;
        await act(c, {
          action: 'propose_write_off',
          by,
          reason: 'below the cost of chasing it',
          amount: c.amountAtStake.replace(/^-/, ''),
          currency: c.stakeCurrency,
        });
        return act(c, { action: 'approve_write_off', by: 'demo-ops-ben', reason: 'agreed: write it off' });
      case 'partner_paid':
        return act(c, {
          action: 'resolve',
          by,
          reason: 'the partner paid the difference',
          outcome: 'partner_paid',
          ...(await paidDifference(c)),
        });
      case 'corrected': {
        const fix = await feeCorrection(c);
        if (!fix) throw new Error('no fee of the final status to correct');
        const correction = correctionEvent({
          ...fix,
          providerId: c.providerId,
          swapId: c.swapId,
          by,
          reason: 'the partner confirmed the fee it signed at creation; its final status was wrong',
        });
        // Appended right behind the correction, on the swap's key: folded before the verdict the correction
        // causes, which would otherwise settle the case by evidence first.
        const resolve = caseActedEvent({
          providerId: c.providerId,
          swapId: c.swapId,
          action: 'resolve',
          by,
          reason: 'the ledger was corrected to the signed fee',
          outcome: 'corrected',
          reference: correction.eventId,
        });
        await options.append(correction);
        await options.append(resolve);
        return awaitFold(c, resolve.eventId);
      }
    }
  };

  const round = async () => {
    // The newest open case is left alone, so one stays open whatever the timing; and a case still moving (its
    // swap's confirming poll or chain evidence on the way: a newer verdict would reopen a resolution) waits.
    const settled = Date.now() - SETTLED_MS;
    const open = (await listCases(pool, { states: ['open'], providerId }))
      .slice(0, -1)
      .filter((c) => Date.parse(c.updatedAt) <= settled);
    for (const want of DEMO_CASE_PLAN) {
      if (stopped || [...taken.values()].includes(want)) continue;
      const needsStake = want === 'accepted_loss' || want === 'partner_paid';
      const candidates = open.filter(
        (x) => !taken.has(x.swapId) && (!needsStake || x.amountAtStake !== null),
      );
      // The correction waits for a case it fits; the other steps take the oldest settled case.
      let c: StoredCase | undefined = candidates[0];
      if (want === 'corrected') {
        c = undefined;
        for (const x of candidates) if (!c && (await feeCorrection(x))) c = x;
        if (!c) continue;
      }
      if (!c) return;
      taken.set(c.swapId, want);
      try {
        await step(c, want);
        logger.info({ swap: `${c.providerId}/${c.swapId}`, step: want }, 'demo operators acted on a case');
      } catch (e) {
        // A race with a newer verdict (the case moved): said, and another case takes the step.
        taken.delete(c.swapId);
        logger.info({ swap: `${c.providerId}/${c.swapId}`, step: want, err: e }, 'demo case action refused');
      }
    }
  };

  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      round().catch((e: unknown) => logger.warn({ err: e }, 'demo operators: round failed')),
    );
  }, options.intervalMs ?? 5_000);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
