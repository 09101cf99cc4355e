import type pg from 'pg';
import { partnerTextProblem } from './text.ts';

/** A swap as operators name it: `<providerId>/<swapId>` (a swapId is unique per partner only). */
export interface SwapRef {
  readonly providerId: string;
  readonly swapId: string;
}

export class SwapRefError extends Error {
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

/** The one swap a reference names in the projection; a bare swapId two partners share is ambiguous. */
export async function resolveSwapRef(pool: pg.Pool, ref: SwapRef | { swapId: string }): Promise<SwapRef> {
  if ('providerId' in ref) return ref;
  const r = await pool.query<{ provider_id: string }>(
    'select provider_id from swaps where swap_id = $1 order by provider_id',
    [ref.swapId],
  );
  if (r.rows.length === 0) throw new SwapRefError(`no swap ${ref.swapId} in the projection`);
  if (r.rows.length > 1)
    throw new SwapRefError(
      `swap id ${ref.swapId} belongs to ${r.rows.length} partners (${r.rows.map((x) => x.provider_id).join(', ')}): name one as <provider>/${ref.swapId}`,
    );
  return { providerId: r.rows[0]!.provider_id, swapId: ref.swapId };
}

export const formatSwapRef = (r: SwapRef): string => `${r.providerId}/${r.swapId}`;
