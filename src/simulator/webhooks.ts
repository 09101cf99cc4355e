import { formatDecimal, isDecimalText, parseDecimal } from '../money/decimal.ts';
import type { StatusWebhookRequest } from '../partner/types.ts';
import { FINAL_LIKE, type SwapState } from './progression.ts';
import type { SwapBook } from './swaps.ts';
import type { PartnerSimulatorOptions, WebhookDelivery } from './types.ts';

/** Status webhooks to the platform: the body of a swap's status, pushes, and what the platform answered. */

export class Webhooks {
  private readonly deliveries: WebhookDelivery[] = [];
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly options: PartnerSimulatorOptions,
    private readonly providerId: string,
    private readonly swaps: SwapBook,
    private readonly closing: AbortSignal,
  ) {
    if (options.webhook) new URL(options.webhook.url); // fail at start, not at the first push
  }

  async push(swapId: string, overrides: Partial<StatusWebhookRequest> = {}): Promise<WebhookDelivery> {
    const hook = this.options.webhook;
    if (!hook) throw new Error('simulator started without a webhook URL');
    const swap = this.swaps.must(swapId);
    const body = { ...webhookBody(swap, this.providerId), ...overrides } as StatusWebhookRequest;
    const url = `${hook.url.replace(/\/+$/, '')}/webhook/${encodeURIComponent(swapId)}/status`;
    let delivery: WebhookDelivery;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': hook.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(hook.timeoutMs ?? 5_000),
      });
      delivery = { swapId, url, body, status: res.status, responseBody: await res.text() };
    } catch (e) {
      delivery = { swapId, url, body, error: (e as Error).message };
    }
    this.deliveries.push(delivery);
    this.options.log?.(`webhook ${swapId} ${body.providerStatus} -> ${delivery.status ?? delivery.error}`);
    return delivery;
  }

  /** Pushes in the background after a status change, unless told not to or closing. */
  auto(swap: SwapState): void {
    if (!this.options.webhook || this.options.webhook.autoPush === false || this.closing.aborted) return;
    const p = this.push(swap.swapId).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  all(): WebhookDelivery[] {
    return [...this.deliveries];
  }

  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}

export function webhookBody(swap: SwapState, providerId: string): StatusWebhookRequest {
  const f = swap.fields;
  const body: Record<string, string> = { providerId, providerStatus: swap.status };
  // amount is required; before the final amount is known the estimate is sent. A missing-final-amount fault leaves it out.
  const amount =
    f.amount ??
    (swap.faults.has('missing-final-amount') && FINAL_LIKE.has(swap.like)
      ? undefined
      : formatDecimal(swap.priced.amountTo));
  if (amount !== undefined) body.amount = amount;
  body.providerFees = f.providerFees;
  // "Referral or extra fee" per the interface: the referral fee, or with a fault the referral fee plus as much.
  body.networkFees =
    swap.faults.has('extra-fee-in-network-fees') && FINAL_LIKE.has(swap.like) && isDecimalText(f.referralFees)
      ? formatDecimal(parseDecimal(f.referralFees).times(2))
      : f.referralFees;
  if (f.payinTransactionId) body.payinTransactionId = f.payinTransactionId;
  if (f.payoutTransactionId) body.transactionHash = f.payoutTransactionId;
  return body as unknown as StatusWebhookRequest;
}
