import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayMetrics } from '../../src/gateway/metrics.ts';
import { GatewayService } from '../../src/gateway/service.ts';
import { createLogger } from '../../src/observability/log.ts';
import type { ProviderPartner } from '../../src/providers/clients.ts';
import { ProviderClients } from '../../src/providers/clients.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';
import { testStack } from '../support/context.ts';
import { freshEventLog } from '../support/event-log.ts';
import {
  ADDRESSES,
  api,
  eventually,
  idempotencyKey,
  nonce,
  startPlatform,
  type Platform,
} from './support.ts';

/**
 * Issue 13 point 6 on the real stack: an Idempotency-Key left in progress by a crash answers, after its
 * lease (3 s here), with the recorded outcome or 409 "outcome unknown"; `requests stuck` lists such
 * requests and `requests resolve` settles them.
 */
// Several tests run swap-ledger as processes (tsx loads the sources each time): minutes on a loaded machine.
describe('idempotency leases and stuck requests', { timeout: 180_000 }, () => {
  const stack = testStack();
  let p: Platform;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let crashing: GatewayService;

  beforeAll(async () => {
    log = await freshEventLog(2);
    p = await startPlatform({ label: 'gw-requests', topic: log.topic });
    await p.poller.syncCatalogs();
    // A gateway that records SwapRequested, then dies during the partner call: its key stays in progress.
    const partners = new ProviderClients(p.pool, { refreshMs: 60_000 });
    crashing = new GatewayService({
      pool: p.pool,
      partners: {
        get: async (id) => {
          const real = await partners.get(id);
          if (!real) return undefined;
          const client = Object.create(real.client) as ProviderPartner['client'];
          client.createFloatSwap = async () => {
            throw new Error('gateway killed during the partner call');
          };
          return { ...real, client };
        },
      },
      publisher: p.gateway.publisher,
      logger: createLogger({ level: 'silent' }),
      metrics: createGatewayMetrics(),
      now: () => new Date(),
      quoteMinValidityMs: 2000,
    });
  }, 120_000);

  afterAll(async () => {
    await p?.stop();
    await log?.close();
  });

  const env = () => ({
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    EVENTS_TOPIC: p.topic,
    PROJECTION_SCHEMA: p.schema,
  });
  const floatBody = () => ({
    providerId: p.providerId,
    tradeMethod: 'float' as const,
    from: 'btc',
    to: 'eth',
    amount: '0.01',
    ...ADDRESSES,
    nonce: nonce(),
  });
  const age = (key: string, seconds: number) =>
    p.pool.query(
      `update platform.idempotency_keys set created_at = now() - make_interval(secs => $2) where idempotency_key = $1`,
      [key, seconds],
    );
  const keyRow = async (key: string) =>
    (
      await p.pool.query<{
        state: string;
        response_status: number | null;
        response: Record<string, unknown>;
      }>(
        `select state, response_status, response from platform.idempotency_keys where idempotency_key = $1`,
        [key],
      )
    ).rows[0]!;

  /** A request the crashing gateway left without an outcome; returns its key, body and requestId. */
  const stuck = async () => {
    const body = floatBody();
    const key = idempotencyKey();
    await expect(crashing.createSwap(body, key)).rejects.toThrow('gateway killed');
    const row = await p.pool.query<{ request_id: string }>(
      `select request_id from platform.idempotency_keys where idempotency_key = $1 and state = 'in_progress'`,
      [key],
    );
    return { body, key, requestId: row.rows[0]!.request_id };
  };

  it('within the lease: 409 in progress; beyond it: 409 outcome unknown, no second partner call', async () => {
    const s = await stuck();
    const calls = p.sim.calls('swap-float').length;
    const early = await api(p, 'POST', '/v1/swaps', s.body, { 'idempotency-key': s.key });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatch(/in progress/);
    await age(s.key, 60);
    const late = await api(p, 'POST', '/v1/swaps', s.body, { 'idempotency-key': s.key });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ requestId: s.requestId, outcome: 'unknown' });
    expect(late.body.error).toMatch(/outcome of this request is unknown.*requests resolve/);
    expect(p.sim.calls('swap-float').length).toBe(calls);
    expect((await keyRow(s.key)).state).toBe('in_progress');
  });

  it('beyond the lease with a recorded SwapCreated: the recorded answer, and the key completed', async () => {
    const body = floatBody();
    const key = idempotencyKey();
    const first = await api(p, 'POST', '/v1/swaps', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    // The crash came after the commit, before the key's answer was stored.
    await p.pool.query(
      `update platform.idempotency_keys set state = 'in_progress', response_status = null, response = null,
         completed_at = null, created_at = now() - interval '1 minute' where idempotency_key = $1`,
      [key],
    );
    const again = await api(p, 'POST', '/v1/swaps', body, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toMatchObject({
      swapId: first.body.swapId,
      payinAddress: first.body.payinAddress,
      providerSig: first.body.providerSig,
      requestId: first.body.requestId,
    });
    expect(await keyRow(key)).toMatchObject({ state: 'completed', response_status: 201 });
  });

  // One process run per command (stuck, resolve); the other runs through the CLI's main in-process.
  it('requests stuck lists them; requests resolve settles one as unknown in the operator name', async () => {
    const s = await stuck();
    await age(s.key, 3600);
    const listed = await runCli(['requests', 'stuck', '--older-than', '10m'], env());
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(s.requestId);
    const fresh = await stuck();
    const recent = await runCliInProcess(['requests', 'stuck', '--older-than', '10m'], env());
    expect(recent.stdout).not.toContain(fresh.requestId);

    const noName = await runCliInProcess(['requests', 'resolve', s.requestId], env());
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--by');

    const resolved = await runCli(['requests', 'resolve', s.requestId, '--by', 'alice'], env());
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain('resolved by alice: outcome unknown');
    expect(await keyRow(s.key)).toMatchObject({
      state: 'completed',
      response_status: 409,
      response: expect.objectContaining({ outcome: 'unknown', resolvedBy: 'alice' }),
    });
    const replay = await api(p, 'POST', '/v1/swaps', s.body, { 'idempotency-key': s.key });
    expect(replay.status).toBe(409);
    expect(replay.body.resolvedBy).toBe('alice');
    // The fact is in the log: the request's SwapCreationFailed, by the operator.
    await eventually('SwapCreationFailed folded', async () => {
      const r = await p.pool.query<{ outcome: string }>(
        `select outcome from swap_requests where request_id = $1`,
        [s.requestId],
      );
      return r.rows[0]?.outcome === 'unknown' ? r.rows[0] : undefined;
    });
    const after = await runCliInProcess(['requests', 'stuck', '--older-than', '10m'], env());
    expect(after.stdout).not.toContain(s.requestId);
  });

  it('requests resolve --swap-id asks GET /status: no such swap at the partner is a recorded failure', async () => {
    const s = await stuck();
    const calls = p.sim.calls('status').length;
    const resolved = await runCliInProcess(
      ['requests', 'resolve', s.requestId, '--by', 'bob', '--swap-id', 'no-such-swap'],
      env(),
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(p.sim.calls('status').length).toBeGreaterThan(calls);
    expect(resolved.stdout).toContain('the partner has no swap no-such-swap');
    expect(await keyRow(s.key)).toMatchObject({ state: 'completed', response_status: 502 });
    await eventually('SwapCreationFailed folded', async () => {
      const r = await p.pool.query<{ outcome: string }>(
        `select outcome from swap_requests where request_id = $1`,
        [s.requestId],
      );
      return r.rows[0]?.outcome === 'failed' ? r.rows[0] : undefined;
    });
  });

  it('requests resolve of a request whose swap was recorded settles it from the record', async () => {
    const body = floatBody();
    const key = idempotencyKey();
    const first = await api(p, 'POST', '/v1/swaps', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    await p.pool.query(
      `update platform.idempotency_keys set state = 'in_progress', response_status = null, response = null,
         completed_at = null where idempotency_key = $1`,
      [key],
    );
    const resolved = await runCliInProcess(
      ['requests', 'resolve', first.body.requestId as string, '--by', 'carol'],
      env(),
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain(`HTTP 201 (swap ${String(first.body.swapId)})`);
    const replay = await api(p, 'POST', '/v1/swaps', body, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.body.swapId).toBe(first.body.swapId);
  });
});
