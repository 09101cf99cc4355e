import { describe, expect, it } from 'vitest';
import { SPEC_T0, spec } from '../../src/testing/fold-spec.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';

/** The given/when/then helper itself: its clock and positions, and that a wrong expectation fails. */
describe('FoldSpecification', () => {
  const finished = () => statusReported('s1', 'FINISHED', { amount: '1' });

  it('stamps events one second apart in the order given, and folds them at increasing offsets', () => {
    const [created, pending, fin] = [swapCreated('s1'), statusReported('s1', 'PENDING'), finished()];
    const { row, givenRows } = spec().given(created, pending).when(fin).then({ outcome: 'applied' });
    const times = [created, pending, fin].map((e) => Date.parse(e.occurredAt) - SPEC_T0);
    expect(times).toEqual([0, 1000, 2000]);
    expect(fin.recordedAt).toBe(fin.occurredAt);
    expect([...givenRows.map((r) => r!.offset), row.offset]).toEqual([0n, 1n, 2n]);
    // A new spec starts its own clock.
    const again = finished();
    spec().given(swapCreated('s1')).when(again).then({ outcome: 'applied' });
    expect(Date.parse(again.occurredAt) - SPEC_T0).toBe(1000);
  });

  it('fails on a wrong outcome, reason, swap, queue, conflicts or postings', () => {
    const given = () => spec().given(swapCreated('s1'), finished());
    const wrong = [
      () => given().when(statusReported('s1', 'PENDING')).then({ outcome: 'applied' }),
      () => given().when(statusReported('s1', 'PENDING')).then({ outcome: 'contradicted', reason: 'nope' }),
      () =>
        given()
          .when(statusReported('s1', 'FINISHED', { payoutNetworkFees: '0.1' }))
          .then({ outcome: 'applied', swap: 'unchanged' }),
      () => given().when(statusReported('s1', 'REFUNDED')).then({ outcome: 'contradicted', queue: null }),
      () => given().when(statusReported('s1', 'REFUNDED')).then({ outcome: 'contradicted', conflicts: [] }),
      () =>
        given()
          .when(statusReported('s1', 'FINISHED', { payoutNetworkFees: '0.1' }))
          .then({ outcome: 'applied', postings: [] }),
      () => given().when(statusReported('s1', 'REFUNDED')).thenRejected('contradicts'),
    ];
    for (const [i, run] of wrong.entries()) expect(run, `case ${i}`).toThrow();
  });

  it('needs a when event', () => {
    expect(() => spec().given(swapCreated('s1')).then({ outcome: 'applied' })).toThrow(/when/);
  });
});
