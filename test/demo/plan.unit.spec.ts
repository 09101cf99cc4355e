import { describe, expect, it } from 'vitest';
import { isDemoChainCurrency } from '../../src/demo/chain.ts';
import { FIRST_WAVE } from '../../src/demo/plan.ts';

/** The demo's first wave makes one swap per chain rule of issue 41, each able to show its rule on the demo chains. */
describe("the demo plan's chain-rule swaps", () => {
  const only = (fault: string) => {
    const swaps = FIRST_WAVE.filter((s) => s.fault === fault);
    expect(swaps, fault).toHaveLength(1);
    return swaps[0]!;
  };

  it.each([
    ['payout-claimed-twice', 'FINISHED'],
    ['payout-predates-swap', 'FINISHED'],
    ['refund-dust', 'REFUNDED'],
    ['refund-is-payin', 'REFUNDED'],
  ])('%s: one swap, %s, in currencies the demo chains carry', (fault, outcome) => {
    const swap = only(fault);
    expect(swap.outcome).toBe(outcome);
    expect(isDemoChainCurrency(swap.from) && isDemoChainCurrency(swap.to)).toBe(true);
  });

  it('payout-claimed-twice follows a clean finished swap of the same pair, method and amount: a payout to cite that pays enough', () => {
    const twice = only('payout-claimed-twice');
    const at = FIRST_WAVE.indexOf(twice);
    const earlier = FIRST_WAVE.slice(0, at).filter(
      (s) =>
        s.fault === undefined &&
        s.outcome === 'FINISHED' &&
        s.method === twice.method &&
        s.from === twice.from &&
        s.to === twice.to &&
        s.amount === twice.amount,
    );
    expect(earlier.length).toBeGreaterThan(0);
  });

  it('payout-predates-swap has a transfer paid ahead; no other swap does', () => {
    expect(only('payout-predates-swap').payAhead).toMatch(/^\d+(\.\d+)?$/);
    expect(FIRST_WAVE.filter((s) => s.payAhead !== undefined)).toHaveLength(1);
  });
});
