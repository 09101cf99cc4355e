import { describe, expect, it } from 'vitest';
import { foldEvent } from '../../src/projector/fold.ts';
import { WorkingSet, type PostingRow } from '../../src/projector/state.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { aggregate, inForce, swapLegs, sumsByCurrency } from '../../src/ledger/postings.ts';
import { Decimal } from '../../src/money/decimal.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { at, statusReported, swapCorrected, swapCreated } from '../../src/testing/events.ts';
import { swapKey } from '../../src/events/keys.ts';

const key = (swapId: string) => swapKey('partner-a', swapId);

/**
 * The posting rules, through the fold (the only way postings are made), against postings computed by hand.
 * A row is shown as [line, kind, account, currency, amount].
 */

function foldAll(events: SwapEvent[], ws = new WorkingSet()) {
  events.forEach((e, i) => foldEvent(ws, e, { topic: 'swap-events', partition: 0, offset: BigInt(i) }));
  return ws;
}

const lines = (rows: readonly PostingRow[]) =>
  rows.map((p) => [p.line, p.entryKind, p.account, p.currency, p.amount]);

const T1 = at(100);
const T2 = at(200);
const T3 = at(300);

const FEES = { providerFees: '0.0005', referralFees: '0.0001', payoutNetworkFees: '0.002' };

/** A fixed swap: no request amount, the quote's source amount 0.015 BTC; BTC → ETH. */
function fixedSwap(id: string) {
  return swapCreated(id, {
    time: at(0),
    request: { tradeMethod: 'fixed', quoteRef: `qr-${id}`, quoteId: `q-${id}`, amountFrom: null },
    created: {
      quote: {
        quoteRef: `qr-${id}`,
        quoteId: `q-${id}`,
        tradeMethod: 'fixed',
        currencyFrom: 'btc',
        currencyTo: 'eth',
        amountFrom: '0.015',
        amountTo: '0.25',
        ...FEES,
        expiry: at(600),
        defaultSlippage: '0.01',
        minSlippage: null,
        maxSlippage: null,
        extraFieldsJson: null,
      },
    },
  });
}

const FIXED_FINAL = [
  [1, 'final', 'partner_clearing', 'BTC', '0.015'],
  [2, 'final', 'user_payin', 'BTC', '-0.015'],
  [3, 'final', 'user_payout', 'ETH', '0.2475'],
  [4, 'final', 'payout_network_fees', 'ETH', '0.002'],
  [5, 'final', 'partner_fees', 'ETH', '0.0005'],
  [6, 'final', 'referral_fees_receivable', 'ETH', '0.0001'],
  [7, 'final', 'partner_clearing', 'ETH', '-0.2501'],
];

function expectBalanced(rows: readonly PostingRow[]) {
  const entries = new Map<string, PostingRow[]>();
  for (const r of rows) {
    const k = `${r.entryId}/${r.entryKind}`;
    entries.set(k, [...(entries.get(k) ?? []), r]);
  }
  for (const [k, entry] of entries)
    for (const [currency, sum] of sumsByCurrency(entry)) expect(sum, `${k} ${currency}`).toBe('0');
}

describe('ledger postings: hand-computed cases', () => {
  it('fixed swap FINISHED: payin against the clearing account, the gross output split in four legs', () => {
    const final = statusReported(
      'fx',
      'FINISHED',
      { amount: '0.2475', ...FEES, payinTransactionId: 'in', payoutTransactionId: 'out' },
      { time: T1 },
    );
    const ws = foldAll([fixedSwap('fx'), statusReported('fx', 'PENDING', {}, { time: at(50) }), final]);
    expect(lines(ws.newPostings)).toEqual(FIXED_FINAL);
    for (const p of ws.newPostings) {
      expect(p).toMatchObject({
        postingId: `${final.eventId}:${p.line}`,
        entryId: final.eventId,
        swapId: 'fx',
        swapVersion: 3,
        providerId: 'partner-a',
        effectiveAt: T1,
        recordedAt: T1,
      });
    }
    expect(ws.postings.get(key('fx'))).toEqual(ws.newPostings);
  });

  it('float swap finalized by webhook (amount only), then the confirming poll: a completion entry of the fees', () => {
    const webhook = statusReported('fl', 'FINISHED', { amount: '0.2475' }, { time: T1, source: 'webhook' });
    const poll = statusReported('fl', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T2 });
    const ws = foldAll([swapCreated('fl', { time: at(0) }), webhook, poll]);
    expect(lines(ws.newPostings)).toEqual([
      [1, 'final', 'partner_clearing', 'BTC', '0.015'],
      [2, 'final', 'user_payin', 'BTC', '-0.015'],
      [3, 'final', 'user_payout', 'ETH', '0.2475'],
      [4, 'final', 'partner_clearing', 'ETH', '-0.2475'],
      [1, 'completion', 'payout_network_fees', 'ETH', '0.002'],
      [2, 'completion', 'partner_fees', 'ETH', '0.0005'],
      [3, 'completion', 'referral_fees_receivable', 'ETH', '0.0001'],
      [4, 'completion', 'partner_clearing', 'ETH', '-0.0026'],
    ]);
    const completion = ws.newPostings.filter((p) => p.entryKind === 'completion');
    // The fee belongs to the swap's final time; the platform learnt it later.
    expect(completion.every((p) => p.entryId === poll.eventId && p.effectiveAt === T1)).toBe(true);
    expect(completion.every((p) => p.recordedAt === T2 && p.swapVersion === 3)).toBe(true);
    // Same figures as if all had come at once.
    const net = aggregate(
      ws.newPostings.map((p) => ({
        account: p.account as never,
        currency: p.currency,
        amount: new Decimal(p.amount),
      })),
      ws.swaps.get(key('fl'))!,
    );
    expect(net.map((l) => [l.account, l.currency, l.amount.toFixed()])).toEqual(
      FIXED_FINAL.map(([, , a, c, v]) => [a, c, v]),
    );
    expectBalanced(ws.newPostings);
  });

  it('a repeated final report with nothing new posts nothing more', () => {
    const ws = foldAll([
      fixedSwap('rp'),
      statusReported('rp', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 }),
      statusReported('rp', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T2 }),
    ]);
    expect(ws.newPostings).toHaveLength(7);
  });

  it('REFUNDED: the payin to the partner and its return, of the requested source amount; no fee legs', () => {
    const refund = statusReported(
      'rf',
      'REFUNDED',
      { payinTransactionId: 'in', providerFees: '0.0001', referralFees: '0' },
      { time: T1 },
    );
    const ws = foldAll([swapCreated('rf', { time: at(0) }), refund]);
    expect(lines(ws.newPostings)).toEqual([
      [1, 'final', 'partner_clearing', 'BTC', '0.015'],
      [2, 'final', 'user_payin', 'BTC', '-0.015'],
      [3, 'final', 'user_payin', 'BTC', '0.015'],
      [4, 'final', 'partner_clearing', 'BTC', '-0.015'],
    ]);
    expect(ws.newPostings.every((p) => p.effectiveAt === T1 && p.entryId === refund.eventId)).toBe(true);
  });

  it('REFUNDED without a known source amount posts nothing (nothing is guessed)', () => {
    const ws = foldAll([
      swapCreated('rn', { request: { tradeMethod: 'fixed', amountFrom: null } }),
      statusReported('rn', 'REFUNDED', {}, { time: T1 }),
    ]);
    expect(ws.swaps.get(key('rn'))!.final).toBe(true);
    expect(ws.newPostings).toEqual([]);
  });

  it('EXPIRED: nothing moved, no postings (the swap is closed, not final)', () => {
    const ws = foldAll([swapCreated('ex'), statusReported('ex', 'EXPIRED', {}, { time: T1 })]);
    expect(ws.swaps.get(key('ex'))).toMatchObject({ final: false, statusClass: 'closed' });
    expect(ws.newPostings).toEqual([]);
  });

  it('EXPIRED then a late FINISHED: the final entry, effective when it finished', () => {
    const late = statusReported('lx', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T2 });
    const ws = foldAll([fixedSwap('lx'), statusReported('lx', 'EXPIRED', {}, { time: T1 }), late]);
    expect(lines(ws.newPostings)).toEqual(FIXED_FINAL);
    expect(ws.newPostings.every((p) => p.entryId === late.eventId && p.effectiveAt === T2)).toBe(true);
  });

  it('FINISHED then a contradicting REFUNDED posts nothing more', () => {
    const ws = foldAll([
      fixedSwap('fr'),
      statusReported('fr', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 }),
      statusReported('fr', 'REFUNDED', { amount: '0' }, { time: T2 }),
    ]);
    expect(lines(ws.newPostings)).toEqual(FIXED_FINAL);
  });

  it('the same swapId at two providers: each its own entry, under its own provider', () => {
    const a = statusReported('dup', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 });
    const b = statusReported(
      'dup',
      'FINISHED',
      { amount: '0.2475', ...FEES },
      { time: T2, providerId: 'partner-b' },
    );
    const ws = foldAll([
      fixedSwap('dup'),
      { ...fixedSwap('dup'), providerId: 'partner-b', aggregateKey: swapKey('partner-b', 'dup') },
      a,
      b,
    ]);
    expect(lines(ws.postings.get(key('dup'))!)).toEqual(FIXED_FINAL);
    expect(lines(ws.postings.get(swapKey('partner-b', 'dup'))!)).toEqual(FIXED_FINAL);
    expect(
      ws.postings
        .get(swapKey('partner-b', 'dup'))!
        .every((p) => p.providerId === 'partner-b' && p.entryId === b.eventId),
    ).toBe(true);
    expect(
      ws.postings.get(key('dup'))!.every((p) => p.providerId === 'partner-a' && p.entryId === a.eventId),
    ).toBe(true);
  });

  it('corrected FINISHED swap: a reversing entry of the postings in force, then the corrected ones', () => {
    const final = statusReported('co', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 });
    const correction = swapCorrected('co', { amount: '0.24', referralFees: '0.00012' }, { time: T2 });
    const ws = foldAll([fixedSwap('co'), final, correction]);
    expect(lines(ws.newPostings.slice(7))).toEqual([
      [1, 'reversal', 'user_payin', 'BTC', '0.015'],
      [2, 'reversal', 'partner_clearing', 'BTC', '-0.015'],
      [3, 'reversal', 'partner_clearing', 'ETH', '0.2501'],
      [4, 'reversal', 'user_payout', 'ETH', '-0.2475'],
      [5, 'reversal', 'payout_network_fees', 'ETH', '-0.002'],
      [6, 'reversal', 'partner_fees', 'ETH', '-0.0005'],
      [7, 'reversal', 'referral_fees_receivable', 'ETH', '-0.0001'],
      [8, 'correction', 'partner_clearing', 'BTC', '0.015'],
      [9, 'correction', 'user_payin', 'BTC', '-0.015'],
      [10, 'correction', 'user_payout', 'ETH', '0.24'],
      [11, 'correction', 'payout_network_fees', 'ETH', '0.002'],
      [12, 'correction', 'partner_fees', 'ETH', '0.0005'],
      [13, 'correction', 'referral_fees_receivable', 'ETH', '0.00012'],
      [14, 'correction', 'partner_clearing', 'ETH', '-0.24262'],
    ]);
    for (const p of ws.newPostings.slice(7)) {
      // Effective when the swap finalized (a restatement); recorded when the operator corrected it.
      expect(p).toMatchObject({
        entryId: correction.eventId,
        effectiveAt: T1,
        recordedAt: T2,
        swapVersion: 3,
      });
      expect(p.postingId).toBe(`${correction.eventId}:${p.line}`);
    }
    expect(lines(inForce(ws.postings.get(key('co'))!)).map((l) => l.slice(2))).toEqual(
      lines(ws.newPostings.slice(14)).map((l) => l.slice(2)),
    );
    expectBalanced(ws.newPostings);
  });

  it('a second correction reverses only the postings in force (the first correction), not the original', () => {
    const ws = foldAll([
      fixedSwap('c2'),
      statusReported('c2', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 }),
      swapCorrected('c2', { amount: '0.24' }, { time: T2 }),
      swapCorrected('c2', { amount: '0.25' }, { time: T3 }),
    ]);
    const last = ws.newPostings.slice(7 + 14);
    expect(lines(last).filter((l) => l[1] === 'reversal' && l[2] === 'user_payout')).toEqual([
      [4, 'reversal', 'user_payout', 'ETH', '-0.24'],
    ]);
    expect(lines(last).filter((l) => l[1] === 'correction' && l[3] === 'ETH')).toEqual([
      [10, 'correction', 'user_payout', 'ETH', '0.25'],
      [11, 'correction', 'payout_network_fees', 'ETH', '0.002'],
      [12, 'correction', 'partner_fees', 'ETH', '0.0005'],
      [13, 'correction', 'referral_fees_receivable', 'ETH', '0.0001'],
      [14, 'correction', 'partner_clearing', 'ETH', '-0.2526'],
    ]);
  });

  it('correction FINISHED → REFUNDED: the finished figures reversed, the refund posted', () => {
    const ws = foldAll([
      fixedSwap('cr'),
      statusReported('cr', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 }),
      swapCorrected('cr', { status: 'REFUNDED' }, { time: T2 }),
    ]);
    const after = ws.newPostings.slice(7);
    expect(after.filter((p) => p.entryKind === 'reversal')).toHaveLength(7);
    expect(lines(after.filter((p) => p.entryKind === 'correction'))).toEqual([
      [8, 'correction', 'partner_clearing', 'BTC', '0.015'],
      [9, 'correction', 'user_payin', 'BTC', '-0.015'],
      [10, 'correction', 'user_payin', 'BTC', '0.015'],
      [11, 'correction', 'partner_clearing', 'BTC', '-0.015'],
    ]);
    // Every account now nets to zero: the swap moved nothing in the end.
    const net = aggregate(
      ws.newPostings.map((p) => ({
        account: p.account as never,
        currency: p.currency,
        amount: new Decimal(p.amount),
      })),
      ws.swaps.get(key('cr'))!,
    );
    expect(net).toEqual([]);
  });

  it('a correction making a final swap not final reverses it; one making an open swap final posts it', () => {
    const undo = foldAll([
      fixedSwap('cu'),
      statusReported('cu', 'FINISHED', { amount: '0.2475', ...FEES }, { time: T1 }),
      swapCorrected('cu', { status: 'PENDING', final: false }, { time: T2 }),
    ]);
    expect(undo.newPostings.slice(7).map((p) => p.entryKind)).toEqual(Array(7).fill('reversal'));
    expect(undo.newPostings.slice(7).every((p) => p.effectiveAt === T1)).toBe(true);

    const make = foldAll([
      fixedSwap('cm'),
      swapCorrected('cm', { status: 'FINISHED', final: true, amount: '0.2475', ...FEES }, { time: T2 }),
    ]);
    expect(lines(make.newPostings)).toEqual(
      FIXED_FINAL.map(([line, , a, c, v]) => [line, 'correction', a, c, v]),
    );
    expect(make.newPostings.every((p) => p.effectiveAt === T2)).toBe(true);
  });

  it('corrections that leave the figures alone, or touch an open swap, post nothing', () => {
    const ws = foldAll([
      fixedSwap('cn'),
      swapCorrected('cn', { amount: '0.3' }, { time: T1 }),
      statusReported('cn', 'EXPIRED', {}, { time: T2 }),
      swapCorrected('cn', { providerFees: '0.0007' }, { time: T3 }),
    ]);
    expect(ws.swaps.get(key('cn'))!.corrected).toBe(true);
    expect(ws.newPostings).toEqual([]);
  });

  it('18-decimal amounts above 2^64 atomic units are posted exactly', () => {
    const big = {
      amount: '98765432109876543210.987654321098765432',
      payoutNetworkFees: '0.000000000000000001',
      providerFees: '12345678901234567890.123456789012345678',
      referralFees: '1.000000000000000001',
    };
    const ws = foldAll([
      swapCreated('bg', {
        request: {
          amountFrom: '123456789012345678901.123456789012345678',
          payloadCurrencyFrom: 'ETH',
          payloadCurrencyTo: 'USDT',
        },
      }),
      statusReported('bg', 'FINISHED', big, { time: T1 }),
    ]);
    // 123456789012345678901.123456789012345678 ETH is 123456789012345678901123456789012345678 wei > 2^64.
    expect(BigInt('123456789012345678901123456789012345678') > 2n ** 64n).toBe(true);
    expect(lines(ws.newPostings)).toEqual([
      [1, 'final', 'partner_clearing', 'ETH', '123456789012345678901.123456789012345678'],
      [2, 'final', 'user_payin', 'ETH', '-123456789012345678901.123456789012345678'],
      [3, 'final', 'user_payout', 'USDT', '98765432109876543210.987654321098765432'],
      [4, 'final', 'payout_network_fees', 'USDT', '0.000000000000000001'],
      [5, 'final', 'partner_fees', 'USDT', '12345678901234567890.123456789012345678'],
      [6, 'final', 'referral_fees_receivable', 'USDT', '1.000000000000000001'],
      [7, 'final', 'partner_clearing', 'USDT', '-111111111011111111102.111111110111111112'],
    ]);
    expectBalanced(ws.newPostings);
  });

  it('zero and unknown figures post no line', () => {
    const ws = foldAll([
      swapCreated('zz'),
      statusReported('zz', 'FINISHED', { amount: '0.2', referralFees: '0', providerFees: '' }, { time: T1 }),
    ]);
    expect(lines(ws.newPostings).map((l) => l[2])).toEqual([
      'partner_clearing',
      'user_payin',
      'user_payout',
      'partner_clearing',
    ]);
  });

  it('a final status without a rule (not FINISHED or REFUNDED) posts nothing', () => {
    expect(
      swapLegs({
        swapId: 'x',
        providerId: 'p',
        payloadCurrencyFrom: 'BTC',
        payloadCurrencyTo: 'ETH',
        status: 'FAILED',
        final: true,
        finalAt: T1,
        version: 2,
        amountFrom: '1',
        amountTo: '2',
        providerFees: '0.1',
        referralFees: '0.1',
        payoutNetworkFees: '0.1',
      }),
    ).toEqual([]);
  });
});

describe('ledger postings: invariants over a mixed history', () => {
  const events = lifecycleScenario(400, 11);
  const ws = foldAll(events);

  it('every entry sums to zero per currency, and so does the whole journal', () => {
    expect(ws.newPostings.length).toBeGreaterThan(1000);
    expectBalanced(ws.newPostings);
    for (const [, sum] of sumsByCurrency(ws.newPostings)) expect(sum).toBe('0');
  });

  it("the postings in force of every swap net to what the swap's figures call for", () => {
    for (const [swapId, swap] of ws.swaps) {
      if (!swap) continue;
      const posted = aggregate(
        inForce(ws.postings.get(swapId) ?? []).map((p) => ({
          account: p.account as never,
          currency: p.currency,
          amount: new Decimal(p.amount),
        })),
        swap,
      );
      const wanted = aggregate(swapLegs(swap), swap);
      expect(
        posted.map((l) => [l.account, l.currency, l.amount.toFixed()]),
        swapId,
      ).toEqual(wanted.map((l) => [l.account, l.currency, l.amount.toFixed()]));
    }
  });

  it('posting ids are unique and deterministic: folding the same events again gives the same rows', () => {
    const ids = ws.newPostings.map((p) => p.postingId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(foldAll(events).newPostings).toEqual(ws.newPostings);
  });

  it('has every kind of entry: final, completion, reversal, correction', () => {
    expect(new Set(ws.newPostings.map((p) => p.entryKind))).toEqual(
      new Set(['final', 'completion', 'reversal', 'correction']),
    );
  });
});

describe('ledger postings: a case write-off', () => {
  it('debits write_offs against partner_clearing, balanced, and a later correction never reverses it', async () => {
    const { writeOffPostings, ledgerPostings } = await import('../../src/ledger/postings.ts');
    const ws = foldAll([
      swapCreated('wo-1'),
      statusReported('wo-1', 'FINISHED', { amount: '0.24', ...FEES }),
    ]);
    const swap = ws.swaps.get(key('wo-1'))!;
    const wo = writeOffPostings(
      { eventId: '01890000-0000-7000-8000-000000000001', occurredAt: T1, recordedAt: T1 },
      swap,
      { amount: '0.010', currency: 'ETH' },
    );
    expect(lines(wo)).toEqual([
      [1, 'write_off', 'write_offs', 'ETH', '0.01'],
      [2, 'write_off', 'partner_clearing', 'ETH', '-0.01'],
    ]);
    expectBalanced(wo);
    const before = ws.postings.get(key('wo-1'))!;
    const after = { ...swap, amountTo: '0.25', version: swap.version + 1 };
    const corr = ledgerPostings(
      { kind: 'correction', eventId: '01890000-0000-7000-8000-000000000002', recordedAt: T2 },
      swap,
      after,
      [...before, ...wo],
    );
    expect(corr.filter((p) => p.account === 'write_offs')).toEqual([]);
    expect(() =>
      writeOffPostings({ eventId: 'x', occurredAt: T1, recordedAt: T1 }, swap, {
        amount: '0',
        currency: 'ETH',
      }),
    ).toThrow();
  });
});

describe('an invoice settlement', () => {
  it('credits each line receivable against referral_cash, balanced, and a correction never reverses it', async () => {
    const { settlementPostings } = await import('../../src/ledger/postings.ts');
    const rows = settlementPostings(
      { eventId: 'e1', providerId: 'p', recordedAt: '2026-11-03T00:00:00.000Z' },
      'BTC',
      [
        { swapId: 's-1', swapVersion: 3, amount: '0.0002' },
        { swapId: 's-2', swapVersion: 2, amount: '0.00005' },
      ],
    );
    expect(rows.map((r) => [r.line, r.swapId, r.account, r.amount, r.entryKind])).toEqual([
      [1, 's-1', 'referral_cash', '0.0002', 'settlement'],
      [2, 's-1', 'referral_fees_receivable', '-0.0002', 'settlement'],
      [3, 's-2', 'referral_cash', '0.00005', 'settlement'],
      [4, 's-2', 'referral_fees_receivable', '-0.00005', 'settlement'],
    ]);
    expect(sumsByCurrency(rows)).toEqual(new Map([['BTC', '0']]));
    expect(inForce(rows)).toEqual([]);
    expect(() =>
      settlementPostings({ eventId: 'e', providerId: 'p', recordedAt: '2026-11-03T00:00:00.000Z' }, 'BTC', [
        { swapId: 's', swapVersion: 1, amount: '0' },
      ]),
    ).toThrow(/positive/);
  });
});
