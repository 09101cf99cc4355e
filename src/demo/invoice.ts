import type pg from 'pg';
import { payments } from 'bitcoinjs-lib';
import type { SwapEvent } from '../events/types.ts';
import type { Logger } from '../observability/log.ts';
import { verifyPaymentTo, type ChainAccess } from '../ops/chain-payment.ts';
import { invoiceIssueEvent } from '../ops/invoices.ts';
import { invoiceSettleEvent } from '../ops/invoice-settle.ts';
import type { PartnerSimulator } from '../simulator/index.ts';
import { UTXO_NETWORK } from '../chain/index.ts';
import { DEMO_CHAIN_ASSETS } from './chain.ts';

/**
 * The month's referral invoice in the demo, after its statement: issued by one demo operator as `invoice
 * issue` would, then paid by the demo partner, on the demo chain to the platform's referral address where
 * the currency has one (verified there as `invoice settle --tx` verifies it) and by a bank reference
 * otherwise, each payment recorded by another operator. The console's Close page shows it settled.
 */

/** The platform's referral addresses on the demo chains (`REFERRAL_ADDRESSES` of the demo), by platform id. */
export const DEMO_REFERRAL_ADDRESSES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    Object.values(DEMO_CHAIN_ASSETS).map((a) => [
      a.platform,
      a.kind === 'utxo'
        ? payments.p2wpkh({ hash: Buffer.alloc(20, 0xaa), network: UTXO_NETWORK[a.network] }).address!
        : '0x00000000000000000000000000000000000000aa',
    ]),
  ),
);

export interface DemoInvoiceOptions {
  readonly pool: pg.Pool;
  readonly append: (event: SwapEvent) => Promise<void>;
  readonly providerId: string;
  readonly period: string;
  readonly finance: string;
  readonly simulator: PartnerSimulator;
  /** The demo chains' sources; without them every payment is a bank transfer. */
  readonly chainAccess?: ChainAccess;
  readonly logger: Logger;
}

const folded = async (pool: pg.Pool, sql: string, params: unknown[]) => {
  for (let i = 0; i < 100; i++) {
    if ((await pool.query(sql, params)).rowCount) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not folded within 20 s: ${sql.slice(0, 60)}`);
};

/** Issues the month's invoice (once) and settles what is outstanding on it. True once settled. */
export async function settleDemoInvoice(options: DemoInvoiceOptions): Promise<boolean> {
  const { pool, providerId, period, logger } = options;
  let number = (
    await pool.query<{ invoice_number: string }>(
      `select invoice_number from invoices i where provider_id = $1 and period = $2
          and not exists (select 1 from invoices n where n.supersedes = i.invoice_number)`,
      [providerId, period],
    )
  ).rows[0]?.invoice_number;
  if (!number) {
    const issued = await invoiceIssueEvent(pool, {
      providerId,
      period,
      by: 'demo-ops-ana',
      dueDays: 30,
      reissue: false,
      reason: undefined,
      finance: options.finance,
    });
    if (issued.payload.totals.length === 0) return false; // nothing invoiceable yet
    await options.append(issued);
    await folded(pool, 'select 1 from invoices where event_id = $1', [issued.eventId]);
    number = issued.payload.invoiceNumber;
  }
  const totals = (
    await pool.query<{ currency: string; amount: string }>(
      `select t->>'currency' as currency, t->>'amount' as amount
         from invoices i cross join jsonb_array_elements(i.totals) t where i.invoice_number = $1`,
      [number],
    )
  ).rows;
  const paid: Record<string, string> = {};
  for (const { currency, amount } of totals) {
    const partnerId = Object.entries(DEMO_CHAIN_ASSETS).find(([, a]) => a.platform === currency)?.[0];
    const to = DEMO_REFERRAL_ADDRESSES[currency];
    let reference = `demo bank transfer ${number} ${currency}`;
    let verified: string | undefined;
    if (options.chainAccess && partnerId && to) {
      const hash = await options.simulator.payAhead(partnerId, to, amount);
      if (hash) {
        verified = await verifyPaymentTo(options.chainAccess, currency, hash, to, amount);
        reference = hash;
      }
    }
    const event = await invoiceSettleEvent(pool, {
      invoiceNumber: number,
      amount,
      currency,
      method: verified ? 'chain' : 'bank',
      reference,
      by: 'demo-ops-ben',
      ...(verified ? { verified } : {}),
    });
    await options.append(event);
    paid[currency] = verified ? `${amount} on chain ${reference}` : `${amount} by bank`;
  }
  logger.info({ invoice: number, paid }, "demo partner's invoice issued and settled");
  return true;
}
