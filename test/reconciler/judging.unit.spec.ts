// Judging off the event loop (src/reconciler/judging.ts, judge-pool.ts): the same verdicts as on it, the
// verdict's wire bytes decodable to the event judged, a failing swap alone in its chunk, the policy's
// tolerances exact through text, and a judge thread that dies failing its chunk, not the pool.
import { afterAll, describe, expect, it } from 'vitest';
import { envelopeType } from '../../src/events/codec.ts';
import { swapKey } from '../../src/events/keys.ts';
import { JudgePool } from '../../src/reconciler/judge-pool.ts';
import {
  judgeChunk,
  judgeSwap,
  policyFromText,
  policyToText,
  type JudgeChunk,
  type JudgedRow,
  type SwapToJudge,
} from '../../src/reconciler/judging.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  parseReconciliationPolicy,
  type ReconciliationPolicy,
} from '../../src/reconciler/index.ts';
import { VECTOR, vectorSwap } from './vector-swaps.ts';

const envelope = envelopeType();
const setup = {
  payloadKeys: [
    {
      keyId: 'vector',
      curve: 'secp256k1' as const,
      publicKey: VECTOR.publicKey,
      validFrom: '2025-01-01T00:00:00Z',
    },
  ],
  defaultSlippage: null,
};

/** The vector swap, FINISHED with `amount` to the wallet (0.000005 expected: 0.000006 signed less the fee). */
function swap(swapId: string, amount: string): Omit<SwapToJudge, 'setup'> {
  const row: JudgedRow = {
    provider_id: 'p1',
    status: 'FINISHED',
    final: true,
    last_event_id: `final-${swapId}`,
    last_correction_event_id: null,
    amount_to: amount,
    provider_fees: '0.0000001',
    referral_fees: '0.00000005',
    payout_network_fees: '0.000001',
    payin_transaction_id: 'in',
    payout_transaction_id: 'out',
    refund_transaction_id: null,
  };
  return {
    ref: { providerId: 'p1', swapId },
    row,
    createdJson: JSON.stringify(vectorSwap(swapId, 'p1').payload),
    conflicts: [],
    basedOnEventId: `queued-${swapId}`,
  };
}

const chunk = (...swaps: Omit<SwapToJudge, 'setup'>[]): JudgeChunk => ({
  schemaId: 7,
  swaps,
  setups: { p1: setup },
});

/** The verdict event a chunk's bytes hold at an outcome's place, decoded as the projector would. */
function decodedAt(bytes: ArrayBuffer, o: { offset: number; length: number }) {
  const b = Buffer.from(bytes, o.offset, o.length);
  expect(b[0]).toBe(0);
  expect(b.readUInt32BE(1)).toBe(7);
  return envelope.fromBuffer(b.subarray(5)) as { eventId: string; payload: Record<string, unknown> };
}

describe('judgeChunk', () => {
  it('gives each swap the verdict judgeSwap gives it, its wire bytes decoding to that very event', async () => {
    const c = chunk(swap('s1', '0.000005'), swap('s2', '0.0000049'));
    const { bytes, outcomes } = await judgeChunk(c, DEFAULT_RECONCILIATION_POLICY, envelope);
    expect(outcomes.map((o) => o.ok && o.verdict)).toEqual(['MATCHED', 'MISMATCH']);
    for (const [i, o] of outcomes.entries()) {
      if (!o.ok) throw new Error(o.message);
      const alone = await judgeSwap({ ...c.swaps[i]!, setup }, DEFAULT_RECONCILIATION_POLICY);
      const decoded = decodedAt(bytes, o);
      expect(decoded.eventId).toBe(o.eventId);
      expect(o.aggregateKey).toBe(swapKey('p1', c.swaps[i]!.ref.swapId));
      expect(o.basedOnEventId).toBe(`queued-${c.swaps[i]!.ref.swapId}`);
      // The checks are the same as judged alone (the event ids and times differ by construction).
      const payload = Object.values(decoded.payload)[0] as { checks: unknown[]; verdict: string };
      expect(JSON.parse(JSON.stringify(payload))).toEqual(JSON.parse(JSON.stringify(alone.event.payload)));
      expect(o.failing).toEqual(
        alone.result.checks.filter((k) => k.verdict === 'MISMATCH' || k.verdict === 'UNVERIFIABLE'),
      );
    }
    expect(outcomes[1]!.ok && outcomes[1]!.failing.map((k) => k.name)).toContain('amount.to_wallet');
  });

  it('fails a swap that cannot be judged on its own; the chunk judges the others', async () => {
    const broken = { ...swap('s2', '0.000005'), createdJson: '{"not": "a SwapCreated"' };
    const { bytes, outcomes } = await judgeChunk(
      chunk(swap('s1', '0.000005'), broken, swap('s3', '0.000005')),
      DEFAULT_RECONCILIATION_POLICY,
      envelope,
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    expect(!outcomes[1]!.ok && outcomes[1]!.message).toMatch(/JSON/);
    // The bytes hold only the judged ones, back to back.
    const [a, , b] = outcomes;
    if (!a?.ok || !b?.ok) throw new Error('judged');
    expect(b.offset).toBe(a.length);
    expect(bytes.byteLength).toBe(a.length + b.length);
    expect(decodedAt(bytes, b).eventId).toBe(b.eventId);
  });

  it('judges a swap without a provider setup UNVERIFIABLE (no key to try), not as a failure', async () => {
    const { outcomes } = await judgeChunk(
      { schemaId: 7, swaps: [swap('s1', '0.000005')], setups: { p1: null } },
      DEFAULT_RECONCILIATION_POLICY,
      envelope,
    );
    expect(outcomes[0]).toMatchObject({ ok: true, verdict: 'UNVERIFIABLE' });
  });
});

describe('the policy as text', () => {
  it('comes back with the same tolerances, exactly, however small or large', () => {
    const policy = parseReconciliationPolicy({
      RECONCILE_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0.000000000000000001',
      RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5',
      RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '1000000.123456789',
    });
    const back = policyFromText(JSON.parse(JSON.stringify(policyToText(policy))));
    const flat = (p: ReconciliationPolicy) =>
      Object.entries(p.fees).flatMap(([k, t]) =>
        (['favour', 'disfavour'] as const).map(
          (d) => `${k}.${d}: ${t[d].absolute.toFixed()} ${t[d].relative.toFixed()}`,
        ),
      );
    expect(flat(back)).toEqual(flat(policy));
    expect(back.fees.provider.disfavour.absolute.toFixed()).toBe('1000000.123456789');
    expect(back.fees.referral.disfavour.absolute.toFixed()).toBe('0.000000000000000001');
  });

  it('refuses a text that lacks a tolerance', () => {
    const text = policyToText(DEFAULT_RECONCILIATION_POLICY);
    delete text.sum;
    expect(() => policyFromText(text)).toThrow(/no sum tolerance/);
  });
});

describe('JudgePool', () => {
  const policy = parseReconciliationPolicy({ RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: '0.5' });
  const lost: string[] = [];
  const pool = new JudgePool(2, policy, (e) => lost.push(e.message));
  afterAll(() => pool.close());

  it('judges in its threads what judgeChunk judges on the event loop, with the policy it was given', async () => {
    await pool.ready();
    // s4's provider fee came in lower than signed: the platform's favour, within this policy's 50% only.
    const lowFee = swap('s4', '0.000005');
    const c = chunk(swap('s1', '0.000005'), swap('s2', '0.0000049'), swap('s3', '0.00000496'), {
      ...lowFee,
      row: { ...lowFee.row, provider_fees: '0.00000007' },
    });
    const [threaded, here] = await Promise.all([pool.judge(c), judgeChunk(c, policy, envelope)]);
    const verdicts = (r: typeof here) => r.outcomes.map((o) => o.ok && [o.verdict, o.failing, o.length]);
    expect(verdicts(threaded)).toEqual(verdicts(here));
    expect(threaded.outcomes.map((o) => o.ok && o.verdict)).toEqual([
      'MATCHED',
      'MISMATCH',
      'WITHIN_TOLERANCE', // 0.8% short: within the agreed 1% slippage
      'WITHIN_TOLERANCE',
    ]);
    const strict = await judgeChunk(c, DEFAULT_RECONCILIATION_POLICY, envelope);
    expect(strict.outcomes[3]).toMatchObject({ ok: true, verdict: 'MISMATCH' });
    for (const o of threaded.outcomes) if (o.ok) expect(decodedAt(threaded.bytes, o).eventId).toBe(o.eventId);
  });

  it('fails the chunks of a thread that dies, and starts it anew for the next chunk', async () => {
    await pool.ready();
    const slots = (pool as unknown as { slots: { worker?: { terminate(): Promise<number> } }[] }).slots;
    // Chunks of 40 swaps (tens of ms of judging): the threads are stopped while at them.
    const many = (tag: string) =>
      chunk(...Array.from({ length: 40 }, (_, i) => swap(`${tag}-${i}`, '0.000005')));
    const inFlight = Promise.allSettled([pool.judge(many('a')), pool.judge(many('b'))]);
    await Promise.all(slots.map((s) => s.worker!.terminate()));
    const settled = await inFlight;
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    for (const s of settled)
      expect(String((s as PromiseRejectedResult).reason)).toMatch(/judge thread exited/);
    // Told once a thread.
    expect(lost).toEqual(['a judge thread exited (code 1)', 'a judge thread exited (code 1)']);
    const again = await pool.judge(chunk(swap('s3', '0.000005')));
    expect(again.outcomes[0]).toMatchObject({ ok: true, verdict: 'MATCHED' });
  });

  it('refuses work once closed, and a closed thread is not told as lost', async () => {
    const told: Error[] = [];
    const closed = new JudgePool(1, policy, (e) => told.push(e));
    await closed.ready();
    await closed.close();
    expect(told).toEqual([]);
    await expect(closed.judge(chunk(swap('s1', '0.000005')))).rejects.toThrow(/closed/);
  });
});
