import type pg from 'pg';
import { SwapRefError, type SwapRef } from '../swap/ref.ts';

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
