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
 * Issue 34, finding 8, on the real stack (HTTP, the partner simulator, Kafka, the registry, the projector,
 * Postgres): the partner's `createdAt` is read by one strict rule. A year 0001-0099 is kept as written
 * (JS's Date.UTC would read 0050 as 1950); a time Postgres would refuse (an offset beyond ±15:59, year
 * 0000) no longer fails the gateway after the partner created the swap: the swap is recorded at the
 * gateway's time of the answer, with a `response.created_at` finding keeping the text as sent.
 */
describe('the partner createdAt (real stack)', () => {
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  beforeAll(async () => {
    log = await freshEventLog(2);
    p = await startPlatform({ label: 'gw-created-at', topic: log.topic });
    await p.poller.syncCatalogs();
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
  });

  const float = { tradeMethod: 'float', from: 'btc', to: 'eth', amount: '0.01' };
  const swapWithCreatedAt = (createdAt: string) => {
    p.sim.injectFault('swap-float', {
      kind: 'malformed-body',
      variant: 'set-field',
      field: 'createdAt',
      value: createdAt,
    });
    return api(
      p,
      'POST',
      '/v1/swaps',
      { providerId: p.providerId, ...ADDRESSES, nonce: nonce(), ...float },
      { 'idempotency-key': idempotencyKey() },
    );
  };
  const recorded = async (swapId: string) => {
    const payload = await eventually(`SwapCreated of ${swapId} journaled`, async () => {
      const r = await p.pool.query<{
        payload: { createdAt: string; findings: { check: string; outcome: string; actual: string }[] };
      }>(`select payload from event_journal where event_type = 'SwapCreated' and swap_id = $1`, [swapId]);
      return r.rows[0]?.payload;
    });
    const row = await p.pool.query<{ created_at: string; projected: string }>(
      `select to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as created_at,
              to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as projected
         from platform.created_swaps c left join swaps s using (provider_id, swap_id)
        where c.swap_id = $1 and c.provider_id = $2`,
      [swapId, p.providerId],
    );
    return { payload, row: row.rows[0] };
  };

  it('a createdAt in year 0050 is kept as year 0050, not read as 1950', async () => {
    const s = await swapWithCreatedAt('0050-06-01T12:00:00Z');
    // No partner key is valid in year 50: the swap is withheld from the wallet, and recorded.
    expect(s.status).toBe(502);
    expect(s.body.findings).toContainEqual(
      expect.objectContaining({
        check: 'signature.key_window',
        expected: 'a key valid at 0050-06-01T12:00:00Z',
      }),
    );
    const swapId = s.body.swapId as string;
    await eventually('projected', async () => swapRow(p.pool, swapId));
    const { payload, row } = await recorded(swapId);
    expect(payload.createdAt).toBe('0050-06-01T12:00:00.000Z');
    expect(row).toEqual({ created_at: '0050-06-01T12:00:00', projected: '0050-06-01T12:00:00' });
  });

  it.each([
    ['an offset beyond ±15:59', '2026-06-01T12:00:00+16:00'],
    ['year 0000', '0000-06-01T12:00:00Z'],
    ['a day that does not exist', '2026-02-30T12:00:00Z'],
  ])(
    'a createdAt with %s: the swap is recorded and projected, with a finding keeping the text',
    async (_, createdAt) => {
      const before = Date.now();
      const s = await swapWithCreatedAt(createdAt);
      // Created at the partner: answered (201, or 502 when no key window holds the text), never a 500.
      expect([201, 502]).toContain(s.status);
      const swapId = s.body.swapId as string;
      await eventually('projected', async () => swapRow(p.pool, swapId));
      const { payload, row } = await recorded(swapId);
      expect(payload.findings).toContainEqual(
        expect.objectContaining({ check: 'response.created_at', outcome: 'unverifiable', actual: createdAt }),
      );
      // Recorded at the gateway's time of the answer.
      expect(Date.parse(payload.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(row!.created_at).toBe(payload.createdAt.slice(0, 19));
      expect(row!.projected).toBe(payload.createdAt.slice(0, 19));
    },
  );
});
