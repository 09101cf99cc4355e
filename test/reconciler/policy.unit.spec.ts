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

const text = (p: ReconciliationPolicy) =>
  Object.fromEntries(
    Object.entries(p.fees).map(([k, t]) => [k, `${t.absolute.toFixed()} / ${t.relative.toFixed()}`]),
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

describe('reconciliation policy', () => {
  it('defaults to exact fees', () => {
    expect(text(DEFAULT_RECONCILIATION_POLICY)).toEqual({
      provider: '0 / 0',
      referral: '0 / 0',
      payoutNetwork: '0 / 0',
    });
    expect(text(parseReconciliationPolicy({}))).toEqual(text(DEFAULT_RECONCILIATION_POLICY));
  });

  it('names eight keys, each documented', () => {
    expect(Object.keys(RECONCILIATION_POLICY_KEYS).sort()).toEqual([
      'RECONCILE_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_PROVIDER_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_PROVIDER_FEE_TOLERANCE_RELATIVE',
      'RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE',
      'RECONCILE_REFERRAL_FEE_TOLERANCE_RELATIVE',
    ]);
  });

  it('reads a shared tolerance and per-fee overrides, exactly (18 decimals kept)', () => {
    const policy = parseReconciliationPolicy({
      RECONCILE_FEE_TOLERANCE_ABSOLUTE: '0.000000000000000001',
      RECONCILE_FEE_TOLERANCE_RELATIVE: ' 0.005 ',
      RECONCILE_PROVIDER_FEE_TOLERANCE_RELATIVE: '0.1',
      RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_ABSOLUTE: '0.0001',
      RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE: '',
      PATH: '/usr/bin',
    });
    expect(text(policy)).toEqual({
      provider: '0.000000000000000001 / 0.1',
      referral: '0.000000000000000001 / 0.005',
      payoutNetwork: '0.0001 / 0.005',
    });
  });

  it('accepts the bounds: absolute 0, relative 0 and 1', () => {
    expect(
      text(
        parseReconciliationPolicy({
          RECONCILE_FEE_TOLERANCE_ABSOLUTE: '0',
          RECONCILE_FEE_TOLERANCE_RELATIVE: '1',
        }),
      ).provider,
    ).toBe('0 / 1');
  });

  it('reports every problem at once: negative, above 1, exponent, not a number, unknown key', () => {
    expect(
      problems({
        RECONCILE_FEE_TOLERANCE_ABSOLUTE: '-0.01',
        RECONCILE_PROVIDER_FEE_TOLERANCE_RELATIVE: '1.5',
        RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE: '1e-3',
        RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_RELATIVE: 'five percent',
        RECONCILE_FEE_TOLERANCE: '0.1',
      }),
    ).toEqual([
      'RECONCILE_FEE_TOLERANCE: unknown reconciliation key',
      'RECONCILE_FEE_TOLERANCE_ABSOLUTE: -0.01 is negative',
      'RECONCILE_PROVIDER_FEE_TOLERANCE_RELATIVE: 1.5 is above 1 (a ratio from 0 to 1)',
      'RECONCILE_REFERRAL_FEE_TOLERANCE_ABSOLUTE: "1e-3" is not plain decimal text',
      'RECONCILE_PAYOUT_NETWORK_FEE_TOLERANCE_RELATIVE: "five percent" is not plain decimal text',
    ]);
  });

  it('refuses a policy built in code with a JS number, a negative or a missing tolerance', () => {
    const zero = new Decimal(0);
    expect(() =>
      assertReconciliationPolicy({
        fees: {
          provider: { absolute: 0.0001 as unknown as Decimal, relative: zero },
          referral: { absolute: new Decimal('-1'), relative: zero },
          payoutNetwork: { absolute: zero, relative: new Decimal('1.01') },
        },
      }),
    ).toThrow(
      new ReconciliationPolicyError([
        'fees.provider.absolute: must be a Decimal, got number',
        'fees.referral.absolute: -1 is negative',
        'fees.payoutNetwork.relative: 1.01 is above 1 (a ratio from 0 to 1)',
      ]),
    );
    expect(() => assertReconciliationPolicy({ fees: {} } as never)).toThrow(/fees.provider: missing/);
    expect(() => assertReconciliationPolicy(DEFAULT_RECONCILIATION_POLICY)).not.toThrow();
  });
});
