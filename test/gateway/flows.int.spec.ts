import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PAIRS } from '../../src/simulator/index.ts';
import { freshEventLog, waitForProjection } from '../support/event-log.ts';
import { valueOf } from '../../src/observability/metrics.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  statusJournal,
  swapRow,
  type Platform,
} from './support.ts';

/**
 * The Done-when list of the gateway, poller and catalog on the real stack: real HTTP to the gateway,
 * from the gateway and the poller to the partner simulator, from the simulator to the webhook server;
 * Kafka, the registry, the projector and Postgres as in production.
 */
describe('gateway, poller and catalog on the real stack', () => {
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  beforeAll(async () => {
    log = await freshEventLog(4);
    p = await startPlatform({ label: 'gw-flows', topic: log.topic });
    const synced = await p.poller.syncCatalogs();
    expect(synced).toEqual([expect.objectContaining({ providerId: p.providerId, outcome: 'ok', pairs: 56 })]);
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
  });

  const quote = (from: string, to: string, amount: string, extra: Record<string, unknown> = {}) =>
    api(p, 'POST', '/v1/quotes', { providerId: p.providerId, from, to, amount, ...extra });
  const swap = (body: Record<string, unknown>, key = idempotencyKey()) =>
    api(
      p,
      'POST',
      '/v1/swaps',
      { providerId: p.providerId, ...ADDRESSES, nonce: nonce(), ...body },
      {
        'idempotency-key': key,
      },
    );
  const projected = async (
    swapId: string,
    want: (r: NonNullable<Awaited<ReturnType<typeof swapRow>>>) => boolean,
  ) =>
    eventually(`swap ${swapId} in the projection`, async () => {
      const r = await swapRow(p.pool, swapId);
      return r && want(r) ? r : undefined;
    });

  it('lists the synced catalog to an authenticated wallet only', async () => {
    const currencies = await api(p, 'GET', `/v1/providers/${p.providerId}/currencies`);
    expect(currencies.status).toBe(200);
    expect(currencies.body.currencies).toContainEqual(
      expect.objectContaining({ id: 'btc', blockchain: 'bitcoin', platformId: 'BTC', enabled: true }),
    );
    const pairs = await api(p, 'GET', `/v1/providers/${p.providerId}/pairs?from=btc&to=eth`);
    expect(pairs.body.pairs).toEqual([
      {
        from: 'btc',
        to: 'eth',
        tradeMethods: ['fixed', 'float'],
        minAmount: '0.0002',
        maxAmount: '5',
        enabled: true,
      },
    ]);
    const anonymous = await api({ ...p, walletKey: '' }, 'GET', `/v1/providers/${p.providerId}/pairs`);
    expect(anonymous).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it('fixed flow: quote, swap, a poll and a webhook; final in Postgres with fees and hashes', async () => {
    const q = await quote('btc', 'eth', '0.1');
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ tradeMethod: 'fixed', from: 'btc', to: 'eth', amount: '0.1' });
    expect(q.body.quoteId).toMatch(/^q-/);
    expect(q.body.expiry).toMatch(/Z$/);

    const s = await swap({ tradeMethod: 'fixed', quoteRef: q.body.quoteRef, slippage: '0.02' });
    expect(s.status).toBe(201);
    expect(s.body).toMatchObject({
      tradeMethod: 'fixed',
      quoteRef: q.body.quoteRef,
      quoteId: q.body.quoteId,
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: 'ETH',
      amountFrom: '0.1',
      signatureValid: true,
    });
    const swapId = s.body.swapId as string;
    expect(s.body.payinAddress).toBe(p.sim.swap(swapId)!.response.payinAddress);
    expect((s.body.providerSig as Record<string, string>).payload).toBe(p.sim.swap(swapId)!.signed.payload);
    // What the partner was asked: the platform ids from the provider's currency mapping.
    expect(p.sim.swap(swapId)!.request).toMatchObject({
      payloadCurrencyFrom: 'BTC',
      payloadCurrencyTo: 'ETH',
      slippage: '0.02',
    });

    expect((await p.poller.tick()).appended).toBeGreaterThanOrEqual(1); // CREATED -> PENDING by poll
    await projected(swapId, (r) => r.status === 'PENDING');
    p.sim.step(swapId); // FINISHED, pushed by webhook
    await p.sim.settled();
    expect(
      p.sim
        .webhookDeliveries()
        .filter((d) => d.swapId === swapId)
        .map((d) => d.status),
    ).toEqual([200]);
    await projected(swapId, (r) => r.final);
    // The webhook carries no payout network fee and the pending poll's fees were estimates: the final
    // figures are the webhook's, then the confirming GET /status fills the rest.
    await new Promise((r) => setTimeout(r, 1100)); // the swap's poll interval
    await p.poller.tick();
    const final = await projected(swapId, (r) => r.final && r.payout_network_fees !== null);
    const report = p.sim.swap(swapId)!.report as Record<string, string>;
    expect(final).toMatchObject({
      status: 'FINISHED',
      amount_to: report.amount,
      provider_fees: report.providerFees,
      referral_fees: report.referralFees,
      payout_network_fees: report.payoutNetworkFees,
      payin_transaction_id: report.payinTransactionId,
      payout_transaction_id: report.payoutTransactionId,
      signature_valid: true,
    });
    const journal = await statusJournal(p.pool, swapId);
    expect(journal.filter((j) => j.outcome === 'applied').map((j) => `${j.source}:${j.status}`)).toEqual([
      'poll:PENDING',
      'webhook:FINISHED',
      'poll:FINISHED',
    ]);
    // The request and quote were recorded too (keys request:<id> and quote:<ref>).
    const recorded = await p.pool.query(
      `select (select outcome from swap_requests where request_id = $1) as request,
              (select outcome from quotes where quote_ref = $2) as quote`,
      [s.body.requestId, q.body.quoteRef],
    );
    expect(recorded.rows[0]).toEqual({ request: 'requested', quote: 'received' });
  });

  it('float flow: webhooks only, then one confirming GET /status fills the payout network fee', async () => {
    const q = await quote('btc', 'xrp', '0.05');
    expect(q.body).toMatchObject({ tradeMethod: 'float', quoteId: null });
    const s = await swap({
      tradeMethod: 'float',
      from: 'btc',
      to: 'xrp',
      amount: '0.05',
      quoteRef: q.body.quoteRef,
    });
    expect(s.status).toBe(201);
    const swapId = s.body.swapId as string;
    expect(p.sim.swap(swapId)!.request).toMatchObject({ amount: '0.05', payloadCurrencyTo: 'XRP' });

    p.sim.advance(swapId, 'PENDING');
    await p.sim.settled();
    await projected(swapId, (r) => r.status === 'PENDING');
    p.sim.advance(swapId, 'FINISHED');
    await p.sim.settled();
    const byWebhook = await projected(swapId, (r) => r.final);
    expect(byWebhook.payout_network_fees).toBeNull(); // the webhook carries none

    const before = p.sim.calls('status').filter((c) => c.query.swapId === swapId).length;
    await p.poller.tick();
    const filled = await projected(swapId, (r) => r.payout_network_fees !== null);
    const report = p.sim.swap(swapId)!.report as Record<string, string>;
    expect(filled).toMatchObject({
      status: 'FINISHED',
      final: true,
      amount_to: report.amount,
      provider_fees: report.providerFees,
      referral_fees: report.referralFees,
      payout_network_fees: report.payoutNetworkFees,
      payin_transaction_id: report.payinTransactionId,
      payout_transaction_id: report.payoutTransactionId,
    });
    const confirmation = await p.pool.query(
      `select outcome from platform.poll_confirmations where swap_id = $1`,
      [swapId],
    );
    expect(confirmation.rows).toEqual([{ outcome: 'appended' }]);
    // Exactly one confirming call, however many ticks follow.
    await new Promise((r) => setTimeout(r, 1100));
    await p.poller.tick();
    expect(p.sim.calls('status').filter((c) => c.query.swapId === swapId).length).toBe(before + 1);
    const journal = await statusJournal(p.pool, swapId);
    expect(journal.map((j) => `${j.source}:${j.status}:${j.outcome}`)).toEqual([
      'webhook:PENDING:applied',
      'webhook:FINISHED:applied',
      'poll:FINISHED:applied',
    ]);
    // The webhook's networkFees (the simulator sends the referral fee there) is kept as sent, read by
    // evidence: not booked as revenue. The confirming poll brings the referral fee and the network fee.
    expect(Object.keys(journal[2]!.changes!)).toEqual(['referralFees', 'payoutNetworkFees']);
    expect(filled.webhook_network_fees).toBe(report.referralFees);
  });

  it('Idempotency-Key: a retry returns the same swap with one partner call; another body is refused', async () => {
    const q = await quote('eth', 'btc', '1');
    const key = idempotencyKey();
    const body = { tradeMethod: 'fixed', quoteRef: q.body.quoteRef, nonce: nonce() };
    const calls = p.sim.calls('swap-fixed').length;
    const first = await swap(body, key);
    expect(first.status).toBe(201);
    const again = await swap(body, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(p.sim.calls('swap-fixed').length).toBe(calls + 1);

    const other = await swap({ ...body, slippage: '0.05' }, key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatch(/another request/);
    expect(p.sim.calls('swap-fixed').length).toBe(calls + 1);

    // While the first call is still at the partner, the same key is "in progress", never a second call.
    const slowKey = idempotencyKey();
    const slowBody = { ...body, nonce: nonce() };
    p.sim.injectFault('swap-fixed', { kind: 'slow', delayMs: 1500 });
    const inFlight = swap(slowBody, slowKey);
    await eventually('the slow call to reach the partner', async () =>
      p.sim.calls('swap-fixed').length === calls + 2 ? true : undefined,
    );
    const meanwhile = await swap(slowBody, slowKey);
    expect(meanwhile.status).toBe(409);
    expect((await inFlight).status).toBe(201);
    expect(p.sim.calls('swap-fixed').length).toBe(calls + 2);

    await waitForProjection(p.pool, log.topic);
    const requests = await p.pool.query(
      `select count(*)::int as n from swap_requests where idempotency_key = any($1)`,
      [[key, slowKey]],
    );
    expect(requests.rows[0].n).toBe(2);
    const swaps = await p.pool.query(`select count(*)::int as n from swaps where request_id = $1`, [
      first.body.requestId,
    ]);
    expect(swaps.rows[0].n).toBe(1);
  });

  it('refuses an expired fixed quote and a slippage outside the quote range, without a partner call or a record', async () => {
    const q = await quote('eth', 'btc', '2');
    expect(q.body).toMatchObject({ minSlippage: '0.005', maxSlippage: '0.1' });
    const calls = p.sim.calls('swap-fixed').length;
    const key = idempotencyKey();
    const body = { tradeMethod: 'fixed', quoteRef: q.body.quoteRef, nonce: nonce() };

    p.clock.offsetMs = 11 * 60_000; // the simulator's quotes live 10 minutes
    const expired = await swap(body, key);
    p.clock.offsetMs = 0;
    expect(expired.status).toBe(422);
    expect(expired.body.error).toMatch(/expired/);
    for (const slippage of ['0.5', '0.001']) {
      const r = await swap({ ...body, slippage }, key);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ additionalFields: { minSlippage: '0.005', maxSlippage: '0.1' } });
    }
    expect(p.sim.calls('swap-fixed').length).toBe(calls);
    const stored = await p.pool.query(
      `select count(*)::int as n from platform.idempotency_keys where idempotency_key = $1`,
      [key],
    );
    expect(stored.rows[0].n).toBe(0);
    expect(await valueOf(p.gateway.metrics.refusals, { route: '/v1/swaps', reason: 'quote_expired' })).toBe(
      1,
    );
    expect(
      await valueOf(p.gateway.metrics.refusals, { route: '/v1/swaps', reason: 'slippage_out_of_range' }),
    ).toBe(2);
    // The key was not used up by the refusals.
    expect((await swap({ ...body, slippage: '0.1' }, key)).status).toBe(201);
  });

  it('a poll and a webhook reporting the same change apply it once; PENDING -> ON_HOLD -> PENDING is three changes', async () => {
    const s = await swap({ tradeMethod: 'float', from: 'ltc', to: 'eth', amount: '1' });
    const swapId = s.body.swapId as string;
    const interval = () => new Promise((r) => setTimeout(r, 1100)); // the provider's poll interval
    // One poll of the due swap. A tick whose lease claim or release Postgres did not answer in time (a loaded
    // machine) polls nothing and says so (deferred); the next tick takes it, as the cron's next run would.
    const tickUntilPolled = async () => {
      const reports = [];
      for (let i = 0; i < 10; i++) {
        const r = await p.poller.tick();
        reports.push(r);
        if (r.polled > 0) return r;
        await new Promise((res) => setTimeout(res, 300));
      }
      throw new Error(`no poll in 10 ticks: ${JSON.stringify(reports)}`);
    };
    p.sim.advance(swapId, 'PENDING');
    await p.sim.settled();
    await projected(swapId, (r) => r.status === 'PENDING');
    await p.poller.tick(); // fills the payout network fee the webhook does not carry
    await projected(swapId, (r) => r.payout_network_fees !== null);

    // The webhook first, the projector folds it, then the poll finds nothing new: nothing appended.
    p.sim.advance(swapId, 'ON_HOLD');
    await p.sim.settled();
    await projected(swapId, (r) => r.status === 'ON_HOLD');
    await interval();
    const polls = () => p.sim.calls('status').filter((c) => c.query.swapId === swapId).length;
    const [pollsBefore, journalBefore] = [polls(), (await statusJournal(p.pool, swapId)).length];
    await tickUntilPolled();
    await waitForProjection(p.pool, log.topic);
    expect(polls()).toBe(pollsBefore + 1);
    expect((await statusJournal(p.pool, swapId)).length).toBe(journalBefore);

    // Back to PENDING: the poll and the webhook both report it before the projector folds either.
    p.sim.advance(swapId, 'PENDING', undefined, { notify: false });
    await interval();
    await tickUntilPolled();
    expect((await p.sim.pushWebhook(swapId)).status).toBe(200);
    await waitForProjection(p.pool, log.topic);

    const journal = await statusJournal(p.pool, swapId);
    const statusChanges = journal.filter((j) => j.outcome === 'applied' && j.changes?.status);
    expect(statusChanges.map((j) => j.changes!.status)).toEqual([
      ['CREATED', 'PENDING'],
      ['PENDING', 'ON_HOLD'],
      ['ON_HOLD', 'PENDING'],
    ]);
    // ON_HOLD -> PENDING reported twice (one poll, one webhook): applied once, the other a no-op.
    const last = journal.slice(-2);
    expect(last.map((j) => j.status)).toEqual(['PENDING', 'PENDING']);
    expect(last.map((j) => j.source)).toEqual(['poll', 'webhook']);
    expect(last.map((j) => j.outcome)).toEqual(['applied', 'noop']);
  });

  it('a pair disabled at the partner is disabled after the next sync; a quote for it is refused without a partner call', async () => {
    const ok = await quote('sol', 'pol', '1');
    expect(ok.status).toBe(200);
    p.sim.setPairs(DEFAULT_PAIRS.filter((x) => !(x.from === 'sol' && x.to === 'pol')));
    const [sync] = await p.poller.syncCatalogs();
    expect(sync).toMatchObject({ outcome: 'ok', pairs: 55 });
    const row = await p.pool.query(
      `select enabled from platform.catalog_pairs where provider_id = $1 and currency_from = 'sol' and currency_to = 'pol'`,
      [p.providerId],
    );
    expect(row.rows).toEqual([{ enabled: false }]);
    const history = await p.pool.query(
      `select change, old_value, new_value from platform.catalog_changes where provider_id = $1 and item = 'sol/pol'
       order by change_id`,
      [p.providerId],
    );
    expect(history.rows.at(-1)).toEqual({ change: 'disabled', old_value: 'true', new_value: 'false' });

    const calls = p.sim.calls('quote').length;
    const refused = await quote('sol', 'pol', '1');
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({
      error: 'pair sol/pol is disabled',
      messageKey: 'SWAP_PAIR_NOT_FOUND_ERROR',
    });
    const low = await quote('sol', 'eth', '0.01');
    expect(low.status).toBe(400);
    expect(low.body).toMatchObject({
      messageKey: 'FROM_CURRENCY_MINIMUM_AMOUNT_ERROR',
      additionalFields: { minRequiredAmount: '0.1', maxRequiredAmount: '1000' },
    });
    expect(p.sim.calls('quote').length).toBe(calls);
    const pairs = await api(p, 'GET', `/v1/providers/${p.providerId}/pairs?from=sol&to=pol`);
    expect(pairs.body.pairs).toEqual([]);
    p.sim.setPairs(DEFAULT_PAIRS);
  });

  it("passes the partner's refusals on with their keys and records them", async () => {
    p.sim.injectFault('quote', { kind: 'error-key', messageKey: 'CURRENCY_REGION_RESTRICTED_ERROR' });
    const restricted = await quote('btc', 'usdt', '0.1');
    expect(restricted.status).toBe(451);
    expect(restricted.body).toMatchObject({ messageKey: 'CURRENCY_REGION_RESTRICTED_ERROR' });
    p.sim.injectFault('swap-float', { kind: 'error-key', messageKey: 'NO_DEPOSIT_WALLET_ERROR' });
    const noWallet = await swap({ tradeMethod: 'float', from: 'btc', to: 'usdt', amount: '0.1' });
    expect(noWallet.status).toBe(400);
    expect(noWallet.body).toMatchObject({ messageKey: 'NO_DEPOSIT_WALLET_ERROR' });
    await waitForProjection(p.pool, log.topic);
    const quoteRow = await p.pool.query(`select outcome, error_key from quotes where quote_ref = $1`, [
      restricted.body.quoteRef,
    ]);
    expect(quoteRow.rows).toEqual([{ outcome: 'rejected', error_key: 'CURRENCY_REGION_RESTRICTED_ERROR' }]);
    const requestRow = await p.pool.query(
      `select outcome, failure_kind, error_key from swap_requests where request_id = $1`,
      [noWallet.body.requestId],
    );
    expect(requestRow.rows).toEqual([
      { outcome: 'failed', failure_kind: 'partner_error', error_key: 'NO_DEPOSIT_WALLET_ERROR' },
    ]);
  });

  it('withholds a swap whose signed payload does not match (502 with findings) and still records it', async () => {
    p.sim.injectSwapFaults(['wrong-nonce']);
    const s = await swap({ tradeMethod: 'float', from: 'btc', to: 'eth', amount: '0.01' });
    expect(s.status).toBe(502);
    expect(s.body).not.toHaveProperty('payinAddress');
    expect(s.body).not.toHaveProperty('providerSig');
    expect(s.body.findings).toContainEqual(
      expect.objectContaining({ check: 'payload.device_transaction_id_ng', outcome: 'mismatch' }),
    );
    const swapId = s.body.swapId as string;
    const row = await projected(swapId, () => true);
    expect(row.status).toBe('CREATED');
    expect(await valueOf(p.gateway.metrics.payloadRejections, { provider: p.providerId })).toBe(1);
    // A webhook for it is accepted: the swap exists.
    p.sim.advance(swapId, 'PENDING');
    await p.sim.settled();
    expect(p.sim.webhookDeliveries().at(-1)!.status).toBe(200);
  });
});
