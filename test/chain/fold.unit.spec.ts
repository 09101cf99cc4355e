import { describe, expect, it } from 'vitest';
import { chainObserved } from '../../src/testing/chain.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { spec } from '../../src/testing/fold-spec.ts';

const USER = '0xb794f5ea0ba39494ce839613fffba74279579268';
const OTHER = '0x00000000000000000000000000000000000000aa';
const finished = (swapId = 's1') =>
  statusReported(swapId, 'FINISHED', {
    amount: '0.248',
    payinTransactionId: 'in',
    payoutTransactionId: 'out',
  });
const claimsOf = (r: ReturnType<ReturnType<typeof spec>['then']>) => [...r.ws.chainClaims.values()];

describe('fold: ChainTransactionObserved', () => {
  it('keeps the latest observation of a (swap, role, txid) and queues an ended swap for reconciliation', () => {
    const found = chainObserved('s1', { status: 'found', confirmations: 12, txid: 'out' });
    const r = spec()
      .given(
        swapCreated('s1'),
        finished(),
        chainObserved('s1', { status: 'pending', confirmations: 1, txid: 'out' }),
      )
      .when(found)
      .then({ outcome: 'applied', queue: { queuedByEventId: found.eventId, reason: 'chain' } });
    expect([...r.ws.chainObservations.values()]).toMatchObject([
      {
        swapId: 's1',
        role: 'payout',
        txid: 'out',
        status: 'found',
        confirmations: 12,
        eventId: found.eventId,
      },
    ]);
  });

  it('records the observation of an open swap without queueing it (it is judged when it ends)', () => {
    const r = spec()
      .given(swapCreated('s1'))
      .when(chainObserved('s1', { role: 'payin', txid: 'in' }))
      .then({ outcome: 'applied', queue: null });
    expect(r.ws.chainObservations.size).toBe(1);
  });

  it('records the block time, the fee, the contract call and each transfer index', () => {
    const r = spec()
      .given(swapCreated('s1'), finished())
      .when(
        chainObserved('s1', {
          txid: 'out',
          blockTime: '2026-11-01T11:00:00.000Z',
          fee: '21000000000000',
          contractCall: true,
          transfers: [{ asset: 'native', recipient: USER, amount: '248000000000000000', index: null }],
        }),
      )
      .then({ outcome: 'applied' });
    expect([...r.ws.chainObservations.values()][0]).toMatchObject({
      blockTime: '2026-11-01T11:00:00.000Z',
      fee: '21000000000000',
      contractCall: true,
      transfers: [{ index: null }],
    });
  });

  it('reads an observation written before contractCall by its note in the detail (judged as it was)', () => {
    const r = spec()
      .given(swapCreated('s1'), finished())
      .when(chainObserved('s1', { txid: 'out', detail: 'a contract call: internal moves not visible' }))
      .then({ outcome: 'applied' });
    expect([...r.ws.chainObservations.values()][0]!.contractCall).toBe(true);
  });

  it('rejects, with the reason, an observation the projection cannot hold', () => {
    const cases: [Parameters<typeof chainObserved>[1], string][] = [
      [{ role: 'fee' }, 'role "fee"'],
      [{ status: 'maybe' }, 'status "maybe"'],
      [{ transfers: [{ asset: 'native', recipient: 'x', amount: '1.5' }] }, 'not atomic units'],
      [{ transfers: [{ asset: 'native', recipient: 'x', amount: '-1' }] }, 'not atomic units'],
      [{ transfers: [{ asset: 'native', recipient: 'x', amount: '1', index: -1 }] }, 'index -1'],
      [{ fee: '0.5' }, 'fee "0.5"'],
      [{ blockTime: 'yesterday' }, 'blockTime "yesterday"'],
      [{ confirmations: -1 }, 'confirmations -1'],
      [{ txid: '' }, 'txid is empty'],
    ];
    for (const [fields, reason] of cases)
      spec().given(swapCreated('s1'), finished()).when(chainObserved('s1', fields)).thenRejected(reason);
  });

  it('rejects an observation of an unknown swap', () => {
    spec().when(chainObserved('nope')).thenRejected('unknown swap');
  });

  it('folds a refused answer (the watcher appends it for a lying source)', () => {
    const r = spec()
      .given(swapCreated('s1'), finished())
      .when(chainObserved('s1', { txid: 'out', status: 'refused', proven: false, transfers: [] }))
      .then({ outcome: 'applied' });
    expect([...r.ws.chainObservations.values()][0]!.status).toBe('refused');
    expect(r.ws.chainClaims.size).toBe(0);
  });
});

describe('fold: one transfer, one claim', () => {
  const batch = (swapId: string, extra: Parameters<typeof chainObserved>[1] = {}) =>
    chainObserved(swapId, {
      txid: 'batch',
      transfers: [
        { asset: 'native', recipient: USER, amount: '5', index: 0 },
        { asset: 'native', recipient: OTHER, amount: '7', index: 1 },
        { asset: '0xtoken', recipient: USER, amount: '9', index: 2 },
      ],
      ...extra,
    });

  it('claims the transfers paying the swap address for the role in the observed asset, each once', () => {
    const first = batch('s1');
    const r = spec().given(swapCreated('s1'), finished()).when(first).then({ outcome: 'applied' });
    expect(claimsOf(r)).toEqual([
      {
        chain: 'ethereum',
        txid: 'batch',
        transfer: '0',
        providerId: 'partner-a',
        swapId: 's1',
        role: 'payout',
        eventId: first.eventId,
        asset: 'native',
        recipient: USER,
        amount: '5',
      },
    ]);
    expect(r.row.reason).toContain('claims 1 transfer(s)');
  });

  it('a later observation of the same swap keeps the first claim (its event)', () => {
    const first = batch('s1', { status: 'pending', confirmations: 1 });
    const r = spec()
      .given(swapCreated('s1'), finished(), first)
      .when(batch('s1'))
      .then({ outcome: 'applied' });
    expect(claimsOf(r).map((c) => c.eventId)).toEqual([first.eventId]);
  });

  it('two swaps citing one transfer both record their claim (the earliest holds it when judged)', () => {
    const a = batch('s1');
    const r = spec()
      .given(swapCreated('s1'), swapCreated('s2'), finished('s1'), finished('s2'), a)
      .when(batch('s2'))
      .then({ outcome: 'applied' });
    expect(claimsOf(r).map((c) => [c.swapId, c.transfer])).toEqual([
      ['s1', '0'],
      ['s2', '0'],
    ]);
  });

  it('an observation without an index names its transfer natively (EVM value) or by asset and recipient', () => {
    const r = spec()
      .given(swapCreated('s1'), finished())
      .when(
        chainObserved('s1', {
          txid: 'old',
          transfers: [{ asset: 'native', recipient: USER.toUpperCase().replace('0X', '0x'), amount: '5' }],
        }),
      )
      .then({ outcome: 'applied' });
    expect(claimsOf(r).map((c) => c.transfer)).toEqual(['native']);
    const utxo = spec()
      .given(swapCreated('s1'), finished())
      .when(
        chainObserved('s1', {
          role: 'payin',
          txid: 'in',
          family: 'utxo',
          chain: 'bitcoin',
          transfers: [
            { asset: 'native', recipient: 'bc1qpayin0000000000000000000000000000000', amount: '5' },
          ],
        }),
      )
      .then({ outcome: 'applied' });
    expect(claimsOf(utxo).map((c) => c.transfer)).toEqual([
      'native>bc1qpayin0000000000000000000000000000000',
    ]);
  });

  it('claims nothing from an unproven, not found or reverted observation', () => {
    for (const fields of [{ proven: false }, { status: 'not_found' }, { status: 'reverted' }]) {
      const r = spec()
        .given(swapCreated('s1'), finished())
        .when(batch('s1', fields))
        .then({ outcome: 'applied' });
      expect(r.ws.chainClaims.size).toBe(0);
    }
  });
});
