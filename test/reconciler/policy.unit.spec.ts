import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/money/index.ts';
import {
  DEFAULT_RECONCILIATION_POLICY,
  RECONCILIATION_POLICY_KEYS,
  ReconciliationPolicyError,
  assertReconciliationPolicy,
  parseReconciliationPolicy,
  type ReconciliationPolicy,
} from '../../src/reconciler/index.ts';
import {
  EXACT_BOTH_WAYS,
  EXACT_FEE,
  RETIRED_RECONCILIATION_POLICY_KEYS,
  retiredPolicyKeyProblems,
} from '../../src/reconciler/policy.ts';

/** "favour absolute / favour relative | disfavour absolute / disfavour relative" per kind. */
const text = (p: ReconciliationPolicy) =>
  Object.fromEntries(
    Object.entries(p.fees).map(([k, t]) => [
      k,
      `${t.favour.absolute.toFixed()} / ${t.favour.relative.toFixed()} | ${t.disfavour.absolute.toFixed()} / ${t.disfavour.relative.toFixed()}`,
    ]),
  );

const problems = (values: Record<string, string | undefined>): string[] => {
  try {
    parseReconciliationPolicy(values);
  } catch (e) {
    if (e instanceof ReconciliationPolicyError) return e.problems;
    throw e;
  }
  throw new Error('expected a ReconciliationPolicyError');
};

const EXACT = '0 / 0 | 0 / 0';

describe('reconciliation policy', () => {
  it('defaults to exact fees, both ways, the sum included', () => {
    expect(text(DEFAULT_RECONCILIATION_POLICY)).toEqual({
      provider: EXACT,
      referral: EXACT,
      payoutNetwork: EXACT,
      sum: EXACT,
    });
    expect(text(parseReconciliationPolicy({}))).toEqual(text(DEFAULT_RECONCILIATION_POLICY));
  });

  it('names twenty directional keys, two quote bands and two chain settings, each documented', () => {
    const keys = Object.keys(RECONCILIATION_POLICY_KEYS);
    expect(keys).toHaveLength(24);
    expect(keys).toContain('RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS');
    expect(keys).toContain('RECONCILE_REFUND_FEE_ALLOWANCE_<CURRENCY>');
    expect(keys).toContain('RECONCILE_QUOTE_FIXED_BAND');
    expect(keys).toContain('RECONCILE_QUOTE_FLOAT_BAND');
    for (const direction of ['FAVOUR', 'DISFAVOUR'])
      for (const bound of ['ABSOLUTE', 'RELATIVE']) {
        expect(keys).toContain(`RECONCILE_FEE_${direction}_TOLERANCE_${bound}`);
        for (const kind of ['PROVIDER', 'REFERRAL', 'PAYOUT_NETWORK', 'SUM'])
          expect(keys).toContain(`RECONCILE_${kind}_FEE_${direction}_TOLERANCE_${bound}`);
      }
    for (const doc of Object.values(RECONCILIATION_POLICY_KEYS)) expect(doc.length).toBeGreaterThan(20);
    expect(RECONCILIATION_POLICY_KEYS.RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE).toContain(
      "platform's disfavour",
    );
  });

  it('reads the chain settings: the clock allowance in whole seconds and each currency refund fee allowance', () => {
    expect(parseReconciliationPolicy({}).chain).toEqual({
      clockAllowanceSeconds: 7200,
      refundFeeAllowance: {},
    });
    const p = parseReconciliationPolicy({
      RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS: '600',
      RECONCILE_REFUND_FEE_ALLOWANCE_btc: '0.0002',
    });
    expect(p.chain!.clockAllowanceSeconds).toBe(600);
    expect(p.chain!.refundFeeAllowance['BTC']!.toFixed()).toBe('0.0002');
    expect(() =>
      parseReconciliationPolicy({
        RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS: '1.5',
        RECONCILE_REFUND_FEE_ALLOWANCE_ETH: '-1',
      }),
    ).toThrow(
      /RECONCILE_CHAIN_CLOCK_ALLOWANCE_SECONDS: "1.5" is not a whole number[\s\S]*RECONCILE_REFUND_FEE_ALLOWANCE_ETH: -1 is negative/,
    );
  });

  it('reads shared tolerances per direction and per-kind overrides, exactly (18 decimals kept)', () => {
    const policy = parseReconciliationPolicy({
      RECONCILE_FEE_FAVOUR_TOLERANCE_ABSOLUTE: '0.000000000000000001',
      RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE: ' 0.5 ',
      RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '0.01',
      RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '0.1',
      RECONCILE_PAYOUT_NETWORK_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0.0001',
      RECONCILE_SUM_FEE_FAVOUR_TOLERANCE_RELATIVE: '0',
      RECONCILE_REFERRAL_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '',
      PATH: '/usr/bin',
    });
    expect(text(policy)).toEqual({
      provider: '0.000000000000000001 / 0.5 | 0 / 0.1',
      referral: '0.000000000000000001 / 0.5 | 0 / 0.01',
      payoutNetwork: '0.000000000000000001 / 0.5 | 0.0001 / 0.01',
      sum: '0.000000000000000001 / 0 | 0 / 0.01',
    });
  });

  it('accepts the bounds: absolute 0, relative 0 and 1', () => {
    expect(
      text(
        parseReconciliationPolicy({
          RECONCILE_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE: '0',
          RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '1',
        }),
      ).provider,
    ).toBe('0 / 0 | 0 / 1');
  });

  it('reports every problem at once: negative, above 1, exponent, not a number, unknown key', () => {
    expect(
      problems({
        RECONCILE_FEE_FAVOUR_TOLERANCE_ABSOLUTE: '-0.01',
        RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_RELATIVE: '1.5',
        RECONCILE_REFERRAL_FEE_FAVOUR_TOLERANCE_ABSOLUTE: '1e-3',
        RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_RELATIVE: 'five percent',
        RECONCILE_FEE_TOLERANCE: '0.1',
      }),
    ).toEqual([
      'RECONCILE_FEE_TOLERANCE: unknown reconciliation key',
      'RECONCILE_FEE_FAVOUR_TOLERANCE_ABSOLUTE: -0.01 is negative',
      'RECONCILE_PROVIDER_FEE_DISFAVOUR_TOLERANCE_RELATIVE: 1.5 is above 1 (a ratio from 0 to 1)',
      'RECONCILE_REFERRAL_FEE_FAVOUR_TOLERANCE_ABSOLUTE: "1e-3" is not plain decimal text',
      'RECONCILE_SUM_FEE_DISFAVOUR_TOLERANCE_RELATIVE: "five percent" is not plain decimal text',
    ]);
  });

  it('refuses every old symmetric key loudly, naming the keys that replace it', () => {
    expect(Object.keys(RETIRED_RECONCILIATION_POLICY_KEYS).sort()).toEqual([
      'RECONCILE_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_PROVIDER_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_PROVIDER_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_REFERRAL_FEE_TOLERANCE_RELATIVE',
    ]);
    const found = problems({
      RECONCILE_FEE_TOLERANCE_RELATIVE: '0.5',
      RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE: '0.001',
    });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(
      /^RECONCILE_FEE_TOLERANCE_RELATIVE: a symmetric fee tolerance is no longer accepted/,
    );
    expect(found[0]).toContain(
      'set RECONCILE_FEE_FAVOUR_TOLERANCE_RELATIVE and/or RECONCILE_FEE_DISFAVOUR_TOLERANCE_RELATIVE instead',
    );
    expect(found[1]).toContain(
      'RECONCILE_REFERRAL_FEE_FAVOUR_TOLERANCE_ABSOLUTE and/or RECONCILE_REFERRAL_FEE_DISFAVOUR_TOLERANCE_ABSOLUTE',
    );
    // Every named replacement is a real key.
    for (const replacements of Object.values(RETIRED_RECONCILIATION_POLICY_KEYS))
      for (const key of replacements) expect(RECONCILIATION_POLICY_KEYS).toHaveProperty(key);
    // Blank is "not set", as for every other key.
    expect(retiredPolicyKeyProblems({ RECONCILE_FEE_TOLERANCE_ABSOLUTE: ' ' })).toEqual([]);
  });

  it('refuses a policy built in code with a JS number, a negative, a missing direction or kind', () => {
    const zero = new Decimal(0);
    expect(() =>
      assertReconciliationPolicy({
        fees: {
          provider: {
            favour: { absolute: 0.0001 as unknown as Decimal, relative: zero },
            disfavour: EXACT_FEE,
          },
          referral: { favour: EXACT_FEE, disfavour: { absolute: new Decimal('-1'), relative: zero } },
          payoutNetwork: { favour: EXACT_FEE, disfavour: { absolute: zero, relative: new Decimal('1.01') } },
          sum: { favour: EXACT_FEE } as never,
        },
      }),
    ).toThrow(
      new ReconciliationPolicyError([
        'fees.provider.favour.absolute: must be a Decimal, got number',
        'fees.referral.disfavour.absolute: -1 is negative',
        'fees.payoutNetwork.disfavour.relative: 1.01 is above 1 (a ratio from 0 to 1)',
        'fees.sum.disfavour: missing',
      ]),
    );
    expect(() =>
      assertReconciliationPolicy({
        fees: { provider: EXACT_BOTH_WAYS, referral: EXACT_BOTH_WAYS, payoutNetwork: EXACT_BOTH_WAYS },
      } as never),
    ).toThrow(/fees.sum: missing/);
    expect(() => assertReconciliationPolicy(DEFAULT_RECONCILIATION_POLICY)).not.toThrow();
  });
});
