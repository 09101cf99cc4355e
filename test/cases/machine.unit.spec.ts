import { describe, expect, it } from 'vitest';
import {
  actStep,
  amountAtStake,
  approvedWriteOff,
  CaseRefusal,
  exceptionStep,
  verdictStep,
  type CaseRecord,
  type SwapFactsForCase,
  type VerdictFacts,
} from '../../src/cases/machine.ts';
import type { CaseActed, ReconciliationCheck } from '../../src/events/types.ts';

const swap: SwapFactsForCase = { currencyFrom: 'BTC', currencyTo: 'ETH', lastCorrectionEventId: null };
let n = 0;
const at = () => ({ eventId: `e${++n}`, at: `2026-11-01T12:00:${String(n % 60).padStart(2, '0')}.000Z` });

const check = (
  name: string,
  verdict: string,
  delta: string | null = null,
  actual = '1',
): ReconciliationCheck => ({
  name,
  verdict,
  expected: '2',
  actual,
  delta,
  tolerance: '0',
  detail: null,
});
const verdict = (v: string, checks: ReconciliationCheck[] = [], deadline = false): VerdictFacts => ({
  ...at(),
  verdict: v,
  evidenceDeadlinePassed: deadline,
  checks,
  currencyTo: 'ETH',
});
const mismatch = (actual = '1') =>
  verdict('MISMATCH', [check('amount.to_wallet', 'MISMATCH', '-0.5', actual)]);
const act = (action: string, fields: Partial<CaseActed> = {}): CaseActed => ({
  action,
  operator: 'alice',
  reason: 'looked at it',
  outcome: null,
  sent: null,
  reference: null,
  setting: null,
  amount: null,
  currency: null,
  ...fields,
});
const opened = (): CaseRecord => verdictStep(undefined, mismatch())!;
const step = (c: CaseRecord, a: CaseActed, s = swap) => actStep(c, a, at(), s);
const refused = (c: CaseRecord | undefined, a: CaseActed, message: RegExp, s = swap) => {
  const before = structuredClone(c);
  expect(() => actStep(c, a, at(), s)).toThrow(CaseRefusal);
  expect(() => actStep(c, a, at(), s)).toThrow(message);
  expect(c).toEqual(before); // nothing changed
};

describe('case opening, settling and reopening (derived from verdicts and exceptions)', () => {
  it('a MISMATCH opens a case with the amount at stake in the destination currency', () => {
    const c = opened();
    expect(c).toMatchObject({ state: 'open', outcome: null, trigger: 'mismatch', openings: 1 });
    expect(c.amountAtStake).toBe('0.5');
    expect(c.stakeCurrency).toBe('ETH');
    expect(c.history.map((h) => h.step)).toEqual(['opened']);
  });

  it('an UNVERIFIABLE verdict opens a case only past its evidence deadline', () => {
    expect(
      verdictStep(undefined, verdict('UNVERIFIABLE', [check('fee.provider', 'UNVERIFIABLE')])),
    ).toBeUndefined();
    const c = verdictStep(undefined, verdict('UNVERIFIABLE', [check('fee.provider', 'UNVERIFIABLE')], true))!;
    expect(c).toMatchObject({ state: 'open', trigger: 'unverifiable_past_deadline', amountAtStake: null });
  });

  it('MATCHED and WITHIN_TOLERANCE open nothing', () => {
    expect(verdictStep(undefined, verdict('MATCHED'))).toBeUndefined();
    expect(verdictStep(undefined, verdict('WITHIN_TOLERANCE'))).toBeUndefined();
  });

  it('a newer MATCHED verdict settles an unresolved case by evidence, from every unresolved state', () => {
    for (const c of [
      opened(),
      step(opened(), act('acknowledge')),
      step(opened(), act('dispute', { sent: 'sha256:ab' })),
    ]) {
      const settled = verdictStep(c, verdict('MATCHED'))!;
      expect(settled).toMatchObject({ state: 'resolved', outcome: 'settled_by_evidence' });
      expect(settled.history.at(-1)).toMatchObject({ step: 'resolved', operator: null });
    }
  });

  it('a newer failing verdict reopens a case settled by evidence', () => {
    const settled = verdictStep(opened(), verdict('MATCHED'))!;
    const again = verdictStep(settled, mismatch())!;
    expect(again).toMatchObject({ state: 'open', outcome: null, openings: 2, resolvedAt: null });
    expect(again.history.at(-1)!.step).toBe('reopened');
  });

  it('an operator resolution is reopened only by a verdict that fails otherwise than the one resolved', () => {
    const resolved = step(
      opened(),
      act('resolve', { outcome: 'false_alarm', setting: 'RECONCILE_SLIPPAGE' }),
    );
    expect(verdictStep(resolved, mismatch())).toBeUndefined(); // the same failure, judged again
    const reopened = verdictStep(resolved, mismatch('0.9'))!;
    expect(reopened).toMatchObject({ state: 'open', openings: 2 });
  });

  it('a still-failing verdict with other figures updates an unresolved case without changing its state', () => {
    const c = step(opened(), act('acknowledge'));
    const next = verdictStep(c, verdict('MISMATCH', [check('amount.to_wallet', 'MISMATCH', '-0.7', '0.3')]))!;
    expect(next).toMatchObject({ state: 'acknowledged', amountAtStake: '0.7' });
    expect(
      verdictStep(next, verdict('MISMATCH', [check('amount.to_wallet', 'MISMATCH', '-0.7', '0.3')])),
    ).toBeUndefined();
  });

  it('an exception opens a case, or reopens a resolved one; an unresolved case stays as it is', () => {
    const x = { ...at(), reason: 'contradicts final swap' };
    expect(exceptionStep(undefined, x)).toMatchObject({ state: 'open', trigger: 'exception' });
    expect(exceptionStep(opened(), x)).toBeUndefined();
    const settled = verdictStep(opened(), verdict('MATCHED'))!;
    expect(exceptionStep(settled, x)).toMatchObject({ state: 'open', openings: 2 });
  });

  it('the amount at stake is the largest failing amount or fee delta, never a guess', () => {
    expect(
      amountAtStake([
        check('amount.to_wallet', 'MISMATCH', '-0.25'),
        check('fee.provider', 'MISMATCH', '1.5'),
        check('fee.referral', 'MATCHED', '9'),
        check('signature.valid', 'MISMATCH', '7'),
        check('fee.sum', 'MISMATCH', 'n/a'),
      ]),
    ).toBe('1.5');
    expect(amountAtStake([check('status.final', 'MISMATCH')])).toBeNull();
  });
});

describe('operator actions (CaseActed)', () => {
  it('open → acknowledged → disputed → resolved, each step in the history with operator and reason', () => {
    let c = step(opened(), act('acknowledge'));
    expect(c.state).toBe('acknowledged');
    c = step(c, act('dispute', { sent: 'sha256:0123' }));
    expect(c.state).toBe('disputed');
    expect(c.history.at(-1)).toMatchObject({
      step: 'dispute',
      operator: 'alice',
      details: { sent: 'sha256:0123' },
    });
    c = step(c, act('resolve', { outcome: 'partner_paid', reference: '0xfeed' }));
    expect(c).toMatchObject({
      state: 'resolved',
      outcome: 'partner_paid',
      resolution: { reference: '0xfeed' },
    });
    expect(c.history.map((h) => [h.from, h.to])).toEqual([
      [null, 'open'],
      ['open', 'acknowledged'],
      ['acknowledged', 'disputed'],
      ['disputed', 'resolved'],
    ]);
  });

  it('an open case may be disputed or resolved without an acknowledgement', () => {
    expect(step(opened(), act('dispute', { sent: 'email of 1 Nov' })).state).toBe('disputed');
    expect(step(opened(), act('resolve', { outcome: 'false_alarm', setting: 'fee tolerance' })).outcome).toBe(
      'false_alarm',
    );
  });

  it('corrected names the swap latest correction (by default) and needs one', () => {
    refused(opened(), act('resolve', { outcome: 'corrected' }), /SwapCorrected.*there is none/);
    const corrected = { ...swap, lastCorrectionEventId: 'c-1' };
    expect(step(opened(), act('resolve', { outcome: 'corrected' }), corrected).resolution).toMatchObject({
      outcome: 'corrected',
      reference: 'c-1',
    });
    refused(
      opened(),
      act('resolve', { outcome: 'corrected', reference: 'c-0' }),
      /not the swap's latest correction/,
      corrected,
    );
  });

  it('a write-off is proposed by one operator and approved by another: accepted loss with amount and currency', () => {
    let c = step(opened(), act('propose_write_off', { amount: '0.50', currency: 'ETH' }));
    expect(c.state).toBe('open');
    expect(c.pendingWriteOff).toMatchObject({ amount: '0.5', currency: 'ETH', proposedBy: 'alice' });
    expect(approvedWriteOff(c)).toBeUndefined();
    c = step(c, act('approve_write_off', { operator: 'bob' }));
    expect(c).toMatchObject({
      state: 'resolved',
      outcome: 'accepted_loss',
      pendingWriteOff: null,
      resolution: { amount: '0.5', currency: 'ETH', proposedBy: 'alice', approvedBy: 'bob' },
    });
    expect(approvedWriteOff(c)).toEqual({ amount: '0.5', currency: 'ETH' });
  });

  it('refuses an approver approving their own write-off', () => {
    const c = step(opened(), act('propose_write_off', { amount: '1', currency: 'ETH' }));
    refused(
      c,
      act('approve_write_off'),
      /alice proposed this write-off: an approver other than its proposer/,
    );
  });

  it('refuses every action on a closed case, whatever its outcome', () => {
    const closed = [
      verdictStep(opened(), verdict('MATCHED'))!,
      step(opened(), act('resolve', { outcome: 'partner_paid', reference: 'r' })),
      step(
        step(opened(), act('propose_write_off', { amount: '1', currency: 'BTC' })),
        act('approve_write_off', { operator: 'bob' }),
      ),
    ];
    for (const c of closed)
      for (const a of [
        act('acknowledge'),
        act('dispute', { sent: 'x' }),
        act('resolve', { outcome: 'false_alarm', setting: 's' }),
        act('propose_write_off', { amount: '1', currency: 'ETH' }),
        act('approve_write_off', { operator: 'carol' }),
      ])
        refused(c, a, /the case is closed \(resolved: .*\): no action on a closed case/);
  });

  it('refuses an action on a swap without a case', () => {
    refused(undefined, act('acknowledge'), /has no case/);
  });

  it('refuses transitions out of order with a clear reason', () => {
    const ack = step(opened(), act('acknowledge'));
    refused(ack, act('acknowledge'), /only an open case is acknowledged; this one is acknowledged/);
    const disputed = step(ack, act('dispute', { sent: 'x' }));
    refused(disputed, act('dispute', { sent: 'y' }), /disputed already/);
    refused(disputed, act('acknowledge'), /only an open case is acknowledged/);
    refused(opened(), act('approve_write_off', { operator: 'bob' }), /no write-off awaits approval/);
    const proposed = step(opened(), act('propose_write_off', { amount: '1', currency: 'ETH' }));
    refused(proposed, act('propose_write_off', { amount: '2', currency: 'ETH' }), /awaits approval/);
  });

  it('refuses missing or wrong fields: operator, reason, outcome, amounts, currency, fields of another action', () => {
    const c = opened();
    refused(c, act('acknowledge', { operator: ' ' }), /operator \(--by\) is required/);
    refused(c, act('acknowledge', { reason: '' }), /reason \(--reason\) is required/);
    refused(c, act('escalate'), /unknown case action "escalate"/);
    refused(c, act('dispute'), /sent .* is required/);
    refused(c, act('resolve'), /resolve needs --outcome partner_paid \| corrected \| false_alarm/);
    refused(c, act('resolve', { outcome: 'settled_by_evidence' }), /closes by itself/);
    refused(c, act('resolve', { outcome: 'accepted_loss' }), /is a write-off/);
    refused(c, act('resolve', { outcome: 'partner_paid' }), /reference .* is required/);
    refused(c, act('resolve', { outcome: 'false_alarm' }), /setting .* is required/);
    refused(c, act('propose_write_off', { amount: '-1', currency: 'ETH' }), /positive decimal amount/);
    refused(c, act('propose_write_off', { amount: '0', currency: 'ETH' }), /positive decimal amount/);
    refused(c, act('propose_write_off', { amount: '1e3', currency: 'ETH' }), /positive decimal amount/);
    refused(
      c,
      act('propose_write_off', { amount: '1', currency: 'USDT' }),
      /neither of the swap's \(BTC, ETH\)/,
    );
    refused(c, act('acknowledge', { amount: '1' }), /amount does not go with acknowledge/);
    refused(c, act('reason\u0000', {}), /unknown case action/);
    refused(c, act('acknowledge', { reason: 'bad\u0000text' }), /reason/);
  });

  it("keeps the chain's word on a partner's payment with its reference, and refuses it anywhere else", () => {
    const verified = 'paid 500000 atomic units of ETH to 0xuser in block 12, 3 confirmation(s)';
    const c = step(opened(), act('resolve', { outcome: 'partner_paid', reference: '0xfeed', verified }));
    expect(c.resolution).toEqual({ outcome: 'partner_paid', reference: '0xfeed', verified });
    expect(c.history.at(-1)!.details).toMatchObject({ verified });
    // An operator's reference alone stays a reference: nothing claims the chain verified it.
    expect(
      step(opened(), act('resolve', { outcome: 'partner_paid', reference: 'bank 42' })).resolution,
    ).toEqual({
      outcome: 'partner_paid',
      reference: 'bank 42',
    });
    refused(opened(), act('acknowledge', { verified }), /verified does not go with acknowledge/);
    refused(opened(), act('dispute', { sent: 'x', verified }), /verified does not go with dispute/);
    refused(
      opened(),
      act('resolve', { outcome: 'false_alarm', setting: 's', verified }),
      /verified does not go with resolve false_alarm/,
    );
    refused(
      opened(),
      act('propose_write_off', { amount: '1', currency: 'ETH', verified }),
      /verified does not go with propose_write_off/,
    );
    refused(
      opened(),
      act('resolve', { outcome: 'partner_paid', reference: '0xfeed', verified: 'bad\u0000' }),
      /verified/,
    );
  });
});
