import { newEvent } from '../events/keys.ts';
import type { ChainTransactionObserved, EventSource, SwapEventOf } from '../events/types.ts';
import { at } from './events.ts';

/**
 * A well-formed ChainTransactionObserved for tests and benchmarks: an ERC-20-less EVM payout found at its
 * depth by default; times fixed unless given, so folds over it are reproducible.
 */
export function chainObserved(
  swapId: string,
  fields: Partial<ChainTransactionObserved> = {},
  opts: { providerId?: string; eventId?: string; time?: string; source?: EventSource } = {},
): SwapEventOf<'ChainTransactionObserved'> {
  const time = opts.time ?? at();
  return newEvent(
    'ChainTransactionObserved',
    new Date(time),
    {
      currency: 'eth',
      chain: 'ethereum',
      family: 'evm',
      txid: `0x${'ab'.repeat(32)}`,
      role: 'payout',
      status: 'found',
      confirmations: 12,
      requiredConfirmations: 12,
      block: 1000,
      blockHash: `0x${'cd'.repeat(32)}`,
      asset: 'native',
      decimals: 18,
      transfers: [
        {
          asset: 'native',
          recipient: '0xb794f5ea0ba39494ce839613fffba74279579268',
          amount: '248000000000000000',
        },
      ],
      source: 'evm-rpc ETH_RPC_URL',
      proven: true,
      deadlinePassed: false,
      observedAt: time,
      detail: null,
      ...fields,
    },
    {
      providerId: opts.providerId ?? 'partner-a',
      source: opts.source ?? 'chain',
      swapId,
      ...(opts.eventId !== undefined ? { eventId: opts.eventId } : {}),
    },
  );
}
