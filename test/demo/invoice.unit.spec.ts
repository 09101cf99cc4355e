import { address } from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { UTXO_NETWORK } from '../../src/chain/index.ts';
import { DEMO_CHAIN_ASSETS } from '../../src/demo/chain.ts';
import { DEMO_REFERRAL_ADDRESSES } from '../../src/demo/invoice.ts';

describe("the demo platform's referral addresses", () => {
  it('name one address per demo chain currency, each valid on its chain', () => {
    expect(Object.keys(DEMO_REFERRAL_ADDRESSES).sort()).toEqual(
      Object.values(DEMO_CHAIN_ASSETS)
        .map((a) => a.platform)
        .sort(),
    );
    for (const a of Object.values(DEMO_CHAIN_ASSETS)) {
      const to = DEMO_REFERRAL_ADDRESSES[a.platform]!;
      if (a.kind === 'utxo') expect(() => address.toOutputScript(to, UTXO_NETWORK[a.network])).not.toThrow();
      else expect(to).toMatch(/^0x[0-9a-f]{40}$/);
    }
  });
});
