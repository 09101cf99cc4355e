import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEventLog } from '../support/event-log.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  swapRow,
  type Platform,
} from './support.ts';

/**
 * The gateway's edges of issues 13 and 14 on the real stack (HTTP, the partner simulator, Kafka, the
 * registry, the projector, Postgres): input bounds refused with nothing stored, a partner's odd fee format
 * that must not lose a real swap.
 */
describe('gateway edges on the real stack', () => {
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  beforeAll(async () => {
    log = await freshEventLog(2);
    p = await startPlatform({ label: 'gw-edges', topic: log.topic });
    await p.poller.syncCatalogs();
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
  });

  const quote = (body: Record<string, unknown>) =>
    api(p, 'POST', '/v1/quotes', {
      providerId: p.providerId,
      from: 'btc',
      to: 'eth',
      amount: '0.1',
      ...body,
    });
  const swap = (body: Record<string, unknown>, key = idempotencyKey()) =>
    api(
      p,
      'POST',
      '/v1/swaps',
      { providerId: p.providerId, ...ADDRESSES, nonce: nonce(), ...body },
      { 'idempotency-key': key },
    );
  const float = { tradeMethod: 'float', from: 'btc', to: 'eth', amount: '0.01' };

  /** Rows the gateway keeps of one Idempotency-Key (none after a refusal before the claim). */
  const keyRows = async (key: string) =>
    (
      await p.pool.query<{ n: number }>(
        `select count(*)::int as n from platform.idempotency_keys where idempotency_key = $1`,
        [key],
      )
    ).rows[0]!.n;

  const created = (swapId: string) =>
    eventually(`SwapCreated of ${swapId} journaled`, async () => {
      const r = await p.pool.query<{ payload: { findings: { check: string; outcome: string }[] } }>(
        `select payload from event_journal where event_type = 'SwapCreated' and swap_id = $1`,
        [swapId],
      );
      return r.rows[0]?.payload;
    });

  describe('input bounds (DESIGN "Input bounds"): 400, no partner call, nothing stored', () => {
    it.each([
      ['payoutAddress', { ...float, payoutAddress: 'bc1q\u0000x' }],
      ['refundAddress', { ...float, refundAddress: 'bc1q\u0000x' }],
      ['payoutAddressExtraId', { ...float, payoutAddressExtraId: '12\u00003' }],
      ['refundAddressExtraId', { ...float, refundAddressExtraId: '\u0007' }],
      ['from', { ...float, from: 'b\u0000tc' }],
      ['quoteRef', { tradeMethod: 'fixed', quoteRef: 'q\u0000' }],
      ['amount (81 digits)', { ...float, amount: '1'.repeat(81) }],
      ['amount (41 integer digits)', { ...float, amount: '1'.repeat(41) }],
      ['amount (37 fraction digits)', { ...float, amount: `0.${'1'.repeat(37)}` }],
      ['slippage (81 digits)', { ...float, slippage: `0.${'1'.repeat(79)}` }],
      ['nonce', { ...float, nonce: `${'ab'.repeat(31)}a\u0000` }],
      ['payoutAddress (lone surrogate)', { ...float, payoutAddress: 'bc1q\ud800x' }],
    ])('swap with a bad %s', async (_, body) => {
      const calls = p.sim.calls().length;
      const key = idempotencyKey();
      const s = await swap(body, key);
      expect(s.status).toBe(400);
      expect(typeof s.body.error).toBe('string');
      expect(p.sim.calls().length).toBe(calls);
      expect(await keyRows(key)).toBe(0);
    });

    it.each([
      ['amount (81 digits)', { amount: '1'.repeat(81) }],
      ['amount (exponent)', { amount: '1e5' }],
      ['from (NUL)', { from: 'btc\u0000' }],
      ['to (escape)', { to: '\u001b[31meth' }],
      ['providerId (NUL)', { providerId: 'p\u0000' }],
    ])('quote with a bad %s', async (_, body) => {
      const calls = p.sim.calls().length;
      const before = await p.pool.query<{ n: number }>(
        `select count(*)::int as n from platform.gateway_quotes`,
      );
      const q = await quote(body);
      expect(q.status).toBe(400);
      expect(p.sim.calls().length).toBe(calls);
      const after = await p.pool.query<{ n: number }>(
        `select count(*)::int as n from platform.gateway_quotes`,
      );
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    });

    it.each(['payinAddress', 'swapId'])(
      'a NUL in the partner answer (%s) is refused (502) and the swap is not stored',
      async (field) => {
        p.sim.injectFault('swap-float', {
          kind: 'malformed-body',
          variant: 'set-field',
          field,
          value: 'x\u0000y',
        });
        const createdRows = async () =>
          (
            await p.pool.query<{ n: number }>(
              `select count(*)::int as n from platform.created_swaps where provider_id = $1`,
              [p.providerId],
            )
          ).rows[0]!.n;
        const before = await createdRows();
        const s = await swap(float);
        expect(s.status).toBe(502);
        expect(s.body.error).toMatch(new RegExp(`${field}: contains the unprintable character U\\+0000`));
        expect(await createdRows()).toBe(before);
      },
    );
  });

  describe('a fee the partner sends as a number or null (issue 13, point 7)', () => {
    it('a numeric providerFees: the swap is created (201), tracked, that fee unknown with a finding', async () => {
      p.sim.injectFault('swap-float', {
        kind: 'malformed-body',
        variant: 'number-for-decimal',
        field: 'providerFees',
      });
      const s = await swap(float);
      expect(s.status).toBe(201);
      expect(s.body.providerFees).toBeNull();
      expect(typeof s.body.referralFees).toBe('string');
      const swapId = s.body.swapId as string;
      const payload = await created(swapId);
      expect(payload.findings).toContainEqual(
        expect.objectContaining({ check: 'response.fee_format', outcome: 'unverifiable' }),
      );
      // Tracked: projected, and a poll reaches it.
      await eventually('projected', async () => swapRow(p.pool, swapId));
      await p.poller.tick();
      expect(p.sim.calls('status').some((c) => c.query.swapId === swapId)).toBe(true);
    });

    it('an absent referralFees: created too', async () => {
      p.sim.injectFault('swap-float', {
        kind: 'malformed-body',
        variant: 'drop-field',
        field: 'referralFees',
      });
      const s = await swap(float);
      expect(s.status).toBe(201);
      expect(s.body.referralFees).toBeNull();
      const payload = await created(s.body.swapId as string);
      expect(payload.findings.filter((f) => f.check === 'response.fee_format')).toHaveLength(1);
    });
  });

  describe('a fixed swap against its quote (issue 14)', () => {
    const fixedQuote = async () => {
      const q = await quote({ amount: '0.1', tradeMethod: 'fixed' });
      expect(q.status).toBe(200);
      return q.body.quoteRef as string;
    };
    const journaled = async (swapId: string) =>
      (await created(swapId)) as unknown as {
        signedAmountToProvider: string;
        findings: { check: string; outcome: string; expected: string | null; actual: string | null }[];
      };

    it('a signed source amount above the requested one is refused (502) and recorded, even with no amount echo', async () => {
      // The partner's quote carries no `amount` echo; the platform still knows what it asked for.
      p.sim.injectFault('quote', { kind: 'malformed-body', variant: 'drop-field', field: 'amount' });
      const quoteRef = await fixedQuote();
      p.sim.injectSwapFaults(['wrong-source-amount']);
      const s = await swap({ tradeMethod: 'fixed', quoteRef });
      expect(s.status).toBe(502);
      expect(s.body).not.toHaveProperty('payinAddress');
      expect(s.body.findings).toContainEqual(
        expect.objectContaining({
          check: 'payload.amount_to_provider',
          outcome: 'mismatch',
          expected: '10000000', // 0.1 BTC at 8 decimals
        }),
      );
      const payload = await journaled(s.body.swapId as string);
      expect(payload.findings).toContainEqual(
        expect.objectContaining({ check: 'payload.amount_to_provider', outcome: 'mismatch' }),
      );
    });

    it('the same without the fault: the requested amount verifies (ok), 201', async () => {
      p.sim.injectFault('quote', { kind: 'malformed-body', variant: 'drop-field', field: 'amount' });
      const quoteRef = await fixedQuote();
      const s = await swap({ tradeMethod: 'fixed', quoteRef });
      expect(s.status).toBe(201);
      const payload = await journaled(s.body.swapId as string);
      expect(payload.findings).toContainEqual(
        expect.objectContaining({ check: 'payload.amount_to_provider', outcome: 'ok', expected: '10000000' }),
      );
      expect(payload.findings).toContainEqual(
        expect.objectContaining({ check: 'quote.amount_to', outcome: 'ok' }),
      );
    });

    it('a signed output that differs from amountTo + payoutNetworkFees is a finding, not a refusal', async () => {
      const quoteRef = await fixedQuote();
      p.sim.injectSwapFaults(['wrong-destination-amount']);
      const s = await swap({ tradeMethod: 'fixed', quoteRef });
      expect(s.status).toBe(201);
      const payload = await journaled(s.body.swapId as string);
      const f = payload.findings.find((x) => x.check === 'quote.amount_to')!;
      expect(f.outcome).toBe('mismatch');
      expect(BigInt(f.actual!)).toBe(BigInt(f.expected!) + BigInt(f.expected!) / 10n + 1n);
    });
  });
});
