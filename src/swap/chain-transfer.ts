import type { ChainTransfer } from '../events/types.ts';

/** EVM addresses are case-insensitive (the checksum is in the case); bech32 too; base58 is not. */
export function sameAddress(family: string, a: string, b: string): boolean {
  const x = a.trim();
  const y = b.trim();
  if (family === 'evm' || /^[a-z0-9]+1[02-9ac-hj-np-z]+$/i.test(x))
    return x.toLowerCase() === y.toLowerCase();
  return x === y;
}

/**
 * Which movement of a transaction a transfer is, for "one transfer, one claim": its index (UTXO output, EVM
 * log) when the observation recorded one; an EVM transaction's own native value is one per transaction
 * ('native'); an observation recorded before indexes were cannot tell two outputs to one recipient apart, so
 * its transfer is named by asset and recipient (two swaps citing such a transaction to the same address in the
 * same asset claim the same transfer).
 */
export function transferKey(family: string, t: ChainTransfer): string {
  if (t.index !== null && t.index !== undefined) return String(t.index);
  if (family === 'evm' && t.asset === 'native') return 'native';
  return `${t.asset}>${family === 'evm' ? t.recipient.trim().toLowerCase() : t.recipient.trim()}`;
}
