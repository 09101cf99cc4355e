import { atomicToDecimal } from '../money/atomic.ts';
import { Decimal, formatDecimal } from '../money/decimal.ts';
import { exactDifference, exactProduct, exactSum } from './exact.ts';
import { type ReconciledCheck, type ReconciliationInput, type Verdict } from './types.ts';
import {
  agreedSlippage,
  check,
  destinationUnit,
  exactly,
  MONEY_ON_EXPIRED,
  readFinalMoney,
  readMoney,
  reasonOf,
  shown,
  text,
  type Outcome,
  type Read,
  type Unit,
} from './inputs.ts';

/** The amount checks: what the user got against what was signed (within the slippage), and the partner side. */

// ---- amounts ----

const USER_SIDE = 'amount.to_wallet';
const PARTNER_SIDE_SUM = 'amount.partner_side';

type Side = 'user' | 'partner';

/** Why an amount check cannot be made at this outcome (nothing ended, or no rule), or undefined. */
function amountUnjudged(input: ReconciliationInput, outcome: Outcome): string | undefined {
  if (outcome === 'open')
    return `the swap has not ended (${input.final.status}); its final amount is not known`;
  if (outcome === 'unruled') return `the design gives no amount rule for final status ${input.final.status}`;
  return undefined;
}

/**
 * REFUNDED and EXPIRED, user side: nothing may reach the user (amount absent or zero). A refund that also
 * paid the user, or an amount on an expired swap, is a MISMATCH; a figure that cannot be read is UNVERIFIABLE.
 */
function nothingPaidCheck(input: ReconciliationInput, outcome: 'REFUNDED' | 'EXPIRED'): ReconciledCheck {
  const amount = readMoney(input.final.amount, 'final amount', destinationUnit(input));
  const expected = 'nothing to the user (amount absent or 0)';
  if ('missing' in amount) return check(USER_SIDE, 'MATCHED', { expected, actual: 'absent' });
  const value = shown(amount);
  if (!value) return check(USER_SIDE, 'UNVERIFIABLE', { expected, detail: reasonOf(amount) });
  if (value.isZero()) return check(USER_SIDE, 'MATCHED', { expected, actual: formatDecimal(value) });
  return check(USER_SIDE, 'MISMATCH', {
    expected,
    actual: formatDecimal(value),
    detail:
      outcome === 'REFUNDED'
        ? `a refund that also reports ${formatDecimal(value)} paid to the user`
        : `${MONEY_ON_EXPIRED}: an amount of ${formatDecimal(value)} reported to the user`,
  });
}

/**
 * What the user side expects the network fee to be: the lower of the creation estimate and the quote's, so
 * that value moved into a creation-time estimate cannot pass (a quote's fee is the partner's word too). A
 * quote's fee that cannot be read (more decimals than the currency has, bad text) leaves the lower one
 * unknown: never the creation estimate alone, which may be the larger.
 */
function networkFeeEstimate(input: ReconciliationInput, unit: Unit, notes: string[]): Read {
  const created = readMoney(
    input.creation.fees.payoutNetworkFees,
    'payout network fee estimate at creation',
    unit,
  );
  const quoted = input.creation.quote?.payoutNetworkFees;
  if (quoted === undefined || quoted === null) return created;
  const fromQuote = readMoney(quoted, 'payout network fee of the quote', unit);
  if (!('value' in fromQuote) || 'imprecise' in fromQuote)
    return {
      refused: true,
      reason: `${reasonOf(fromQuote)}: the lower of the quote's and the creation's estimate is unknown`,
    };
  if (!('value' in created) || 'imprecise' in created || fromQuote.value.gte(created.value)) return created;
  notes.push(
    `the quote's payout network fee ${formatDecimal(fromQuote.value)} is below the creation estimate ${formatDecimal(created.value)}: the lower one is expected`,
  );
  return fromQuote;
}

/** The signed amount_to_wallet as a decimal of the destination currency, or why there is none. */
export function signedAmount(input: ReconciliationInput, unit: Unit, reasons: string[], notes: string[]) {
  const { inspection } = input;
  const decoded = inspection.decoded;
  if (!decoded) {
    const why = inspection.findings.find((f) => f.check === 'payload.decode' && f.outcome !== 'ok')?.detail;
    reasons.push(`the signed payload does not decode${why ? ` (${why})` : ''}: no signed amount_to_wallet`);
    return undefined;
  }
  if (decoded.currency_to !== unit.currency) {
    reasons.push(
      `the payload signs currency_to ${JSON.stringify(decoded.currency_to)}, the request asked for ${JSON.stringify(unit.currency)}: the signed amount is in another currency's units`,
    );
    return undefined;
  }
  if (unit.decimals === undefined) {
    reasons.push(`no decimals known for platform currency ${JSON.stringify(unit.currency)}`);
    return undefined;
  }
  notes.push(
    `signed amount_to_wallet ${decoded.amount_to_wallet} atomic units of ${unit.currency} (${unit.decimals} decimals)`,
  );
  // A payload whose signature does not verify carries a claim, not a signed amount.
  if (!inspection.signatureValid)
    reasons.push(
      'the signature does not verify: amount_to_wallet is not proven signed; figures shown unproven',
    );
  return atomicToDecimal(decoded.amount_to_wallet, unit.decimals);
}

interface Judgement {
  verdict: Verdict;
  outcome: string;
}

/**
 * The slippage rule, `delta` = actual − expected. fixed: at least expected × (1 − slippage), above is
 * never a MISMATCH. float: within ± expected × slippage; above beyond it is a gain to the user, never
 * a MISMATCH; below beyond it is. A float swap with no slippage agreed cannot be judged below expected.
 * `above` words what an excess means for this check.
 */
function judgeSlippage(
  method: 'fixed' | 'float',
  delta: Decimal,
  tolerance: Decimal | undefined,
  above: string,
): Judgement {
  const by = formatDecimal(delta.abs());
  if (delta.isZero()) return { verdict: 'MATCHED', outcome: 'equal to the expected amount' };
  if (delta.gt(0)) {
    if (method === 'fixed')
      return { verdict: 'WITHIN_TOLERANCE', outcome: `fixed: ${by} above the expected amount, ${above}` };
    if (tolerance !== undefined && delta.lte(tolerance))
      return {
        verdict: 'WITHIN_TOLERANCE',
        outcome: `float: ${by} above the expected amount, within the slippage`,
      };
    return {
      verdict: 'WITHIN_TOLERANCE',
      outcome: `float: ${by} above the expected amount${tolerance === undefined ? '' : ', beyond the slippage'}, ${above}: never a mismatch`,
    };
  }
  if (tolerance === undefined)
    return {
      verdict: 'UNVERIFIABLE',
      outcome: `float: ${by} below the expected amount and no slippage agreed for a float swap: a shortfall cannot be told from a rate change`,
    };
  if (delta.abs().lte(tolerance))
    return {
      verdict: 'WITHIN_TOLERANCE',
      outcome: `${method}: ${by} short of the expected amount, within the slippage`,
    };
  return {
    verdict: 'MISMATCH',
    outcome: `${method}: ${by} short of the expected amount, more than the slippage allows`,
  };
}

/**
 * FINISHED: the slippage rules below; REFUNDED and EXPIRED: nothing to the user, the partner side not
 * applicable. The signed amount_to_wallet (atomic units of payloadCurrencyTo, payout network fee
 * included) sets what each side must show:
 * - user side (`amount.to_wallet`): the final `amount` ALONE against signed − the payout network fee
 *   ESTIMATE (the lower of the creation's and the quote's). A network fee charged above its estimate is therefore a shortfall to
 *   the user, never "in the user's favour".
 * - partner side (`amount.partner_side`): final amount + final payoutNetworkFees against the signed
 *   amount: what the partner accounts for. Value moved from amount to network fee passes here and
 *   fails the user side; that is why both exist.
 */
export function amountCheck(side: Side, input: ReconciliationInput, outcome: Outcome): ReconciledCheck {
  const name = side === 'user' ? USER_SIDE : PARTNER_SIDE_SUM;
  const unjudged = amountUnjudged(input, outcome);
  if (unjudged) return check(name, 'UNVERIFIABLE', { detail: unjudged });
  if (outcome === 'REFUNDED' || outcome === 'EXPIRED') {
    if (side === 'user') return nothingPaidCheck(input, outcome);
    return check(name, 'NOT_APPLICABLE', {
      detail: `no swap was executed (${outcome}): the signed amount was never owed`,
    });
  }

  const { creation, final } = input;
  const reasons: string[] = [];
  const notes: string[] = [];
  const unit = destinationUnit(input);
  const signed = signedAmount(input, unit, reasons, notes);

  const amount = readFinalMoney(input, 'amount', 'final amount', unit);
  const other =
    side === 'user'
      ? networkFeeEstimate(input, unit, notes)
      : readFinalMoney(input, 'payoutNetworkFees', 'final payoutNetworkFees', unit);
  for (const read of [amount, other]) {
    const reason = reasonOf(read);
    if (reason) reasons.push(reason);
  }

  let expected: Decimal | undefined;
  let actual: Decimal | undefined;
  if (side === 'user') {
    actual = shown(amount);
    const estimate = shown(other);
    if (signed && estimate) {
      expected = exactly(() => exactDifference(signed, estimate), reasons);
      notes.push(
        `expected = signed ${formatDecimal(signed)} − payout network fee estimate ${formatDecimal(estimate)}; actual = final amount alone`,
      );
      if (expected?.isNegative())
        reasons.push(
          `the payout network fee estimate ${formatDecimal(estimate)} exceeds the signed amount_to_wallet ${formatDecimal(signed)}: no amount to the wallet follows`,
        );
    }
  } else {
    expected = signed;
    const amountValue = shown(amount);
    const feeValue = shown(other);
    if (amountValue && feeValue) {
      actual = exactly(() => exactSum(amountValue, feeValue), reasons);
      notes.push(
        `actual = final amount ${formatDecimal(amountValue)} + final payoutNetworkFees ${formatDecimal(feeValue)}`,
      );
    }
  }

  const method = creation.tradeMethod;
  if (method !== 'fixed' && method !== 'float')
    reasons.push(`trade method ${JSON.stringify(method)} is neither fixed nor float`);
  const slippage = agreedSlippage(input, method);
  let ratio: Decimal | undefined;
  if ('refused' in slippage) reasons.push(slippage.refused);
  else if ('none' in slippage) {
    // Fixed: the output was agreed, so no slippage means exact. Float: it was only estimated.
    if (method === 'fixed') ratio = new Decimal(0);
    notes.push(
      method === 'fixed'
        ? 'no slippage agreed (neither request slippage nor quote defaultSlippage): at least the expected amount required'
        : 'no slippage agreed (request, quote or provider default): above the expected amount is a gain, below cannot be judged',
    );
  } else {
    ratio = slippage.ratio;
    notes.push(`slippage ${formatDecimal(slippage.ratio)} from the ${slippage.source}`);
  }

  const delta = expected && actual ? exactly(() => exactDifference(actual, expected), reasons) : undefined;
  const tolerance = expected && ratio ? exactly(() => exactProduct(expected, ratio), reasons) : undefined;
  const figures = {
    expected: text(expected),
    actual: text(actual),
    delta: text(delta),
    tolerance: text(tolerance),
  };
  const slippageKnown = 'none' in slippage || tolerance !== undefined;
  if (
    reasons.length > 0 ||
    !expected ||
    !actual ||
    !delta ||
    !slippageKnown ||
    (method !== 'fixed' && method !== 'float')
  )
    return check(name, 'UNVERIFIABLE', { ...figures, detail: [...reasons, ...notes].join('; ') });

  const above = side === 'user' ? "in the user's favour" : 'more than signed';
  const judged = judgeSlippage(method, delta, tolerance, above);
  return check(name, judged.verdict, { ...figures, detail: [judged.outcome, ...notes].join('; ') });
}
