import { partnerTextProblem } from './text.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/** A swap as operators name it: `<providerId>/<swapId>` (a swapId is unique per partner only). */
export interface SwapRef {
  readonly providerId: string;
  readonly swapId: string;
}

export class SwapRefError extends InputRefusedError {
  override name = 'SwapRefError';
}

/**
 * Reads `<provider>/<swapId>`, or a bare swapId with `provider` given apart (--provider). A bare swapId
 * alone is returned without a provider: resolveSwapRef finds it when exactly one partner has it.
 */
export function parseSwapRef(text: string, provider?: string): SwapRef | { swapId: string } {
  const slash = text.indexOf('/');
  const [p, swapId] =
    slash > 0 && provider === undefined ? [text.slice(0, slash), text.slice(slash + 1)] : [provider, text];
  for (const [what, v] of [
    ['swap id', swapId],
    ['provider id', p],
  ] as const) {
    if (v === undefined) continue;
    if (v === '') throw new SwapRefError(`the ${what} is empty`);
    const problem = partnerTextProblem(v);
    if (problem) throw new SwapRefError(`the ${what} ${problem}`);
  }
  return p === undefined ? { swapId } : { providerId: p, swapId };
}

export const formatSwapRef = (r: SwapRef): string => `${r.providerId}/${r.swapId}`;
