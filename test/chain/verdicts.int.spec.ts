import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { parseChainSources } from '../../src/chain/index.ts';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform, migrateProjection } from '../../src/db/migrate.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { ensureFinanceViews } from '../../src/ledger/finance-views.ts';
import { createLogger } from '../../src/observability/log.ts';
import { replay } from '../../src/ops/replay.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { DEFAULT_RECONCILIATION_POLICY, Reconciler } from '../../src/reconciler/index.ts';
import { encodeSwapPayload, toPaddedBase64url } from '../../src/simulator/signer.ts';
import { chainObserved } from '../../src/testing/chain.ts';
import { statusReported, swapCreated, swapRequest } from '../../src/testing/events.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * Issue 41, the chain's verdicts on the real stack: observations appended as events, folded by the projector
 * (chain_observations, chain_claims), judged by the reconciler, listed by finance, rebuilt by a replay.
 */
const USER = '0xb794f5ea0ba39494ce839613fffba74279579268';
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const REFUND_TO = swapRequest().refundAddress;
const ONE_ETH = (10n ** 18n).toString();

describe('chain verdicts no partner can game (real stack)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let live: string;
  let pool: pg.Pool;
  let running: RunningProjector;
  const sources = parseChainSources({
    sources: {
      eth: { family: 'evm', urlEnv: 'UNUSED_EVM_URL', ratePerSecond: 10, timeoutMs: 1000 },
      btc: { family: 'utxo', urlEnv: 'UNUSED_ESPLORA_URL', network: 'bitcoin' },
    },
    currencies: {
      ETH: { source: 'eth', confirmations: 12, asset: 'native', decimals: 18, deadlineMinutes: 60 },
      BTC: { source: 'btc', confirmations: 2, asset: 'native', decimals: 8, deadlineMinutes: 600 },
    },
  });
  const reconciler = (withSources: boolean) =>
    new Reconciler({
      projection: pool,
      platform: pool,
      appender: log.appender,
      policy: DEFAULT_RECONCILIATION_POLICY,
      logger,
      ...(withSources ? { chainSources: sources } : {}),
    });
  const checks = async (swapId: string, withSources = true) => {
    const { result } = await reconciler(withSources).check({ providerId: 'partner-a', swapId });
    return { verdict: result.verdict, by: Object.fromEntries(result.checks.map((c) => [c.name, c])) };
  };

  const finished = (id: string, payout: string, payoutAddress = USER) => [
    swapCreated(id, { request: { payoutAddress } }),
    statusReported(id, 'FINISHED', { amount: '1', payinTransactionId: null, payoutTransactionId: payout }),
  ];
  const payoutSeen = (id: string, txid: string, eventId: string, transfers = [{ to: USER, index: 0 }]) =>
    chainObserved(
      id,
      {
        txid,
        transfers: transfers.map((t) => ({
          asset: 'native',
          recipient: t.to,
          amount: ONE_ETH,
          index: t.index,
        })),
      },
      { eventId },
    );
  const refunded = (id: string, payin: string, refund: string) =>
    statusReported(id, 'REFUNDED', {
      amount: null,
      payinTransactionId: payin,
      payoutTransactionId: null,
      refundTransactionId: refund,
    });
  // A decodable payload: the refund is held to its signed source amount, 0.18 BTC.
  const signed = toPaddedBase64url(
    encodeSwapPayload({
      payin_address: 'bc1qpayin0000000000000000000000000000000',
      refund_address: REFUND_TO,
      payout_address: USER,
      currency_from: 'BTC',
      currency_to: 'ETH',
      amount_to_provider: 18_000_000n,
      amount_to_wallet: 10n ** 18n,
      device_transaction_id_ng: Buffer.from(swapRequest().nonce, 'hex'),
    }),
  );

  beforeAll(async () => {
    log = await freshEventLog(3);
    live = uniqueName('chainverdicts', '_');
    await migrateProjection(stack.databaseUrl, live);
    await migratePlatform(stack.databaseUrl);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    await log.append([
      ...finished('c-first', 'dup'),
      ...finished('c-second', 'dup'),
      ...finished('c-batch-a', 'batch', A),
      ...finished('c-batch-b', 'batch', B),
      ...finished('c-old', 'old'),
      ...finished('c-refused', 'liar'),
      swapCreated('c-dust', { created: { providerSigPayload: signed } }),
      refunded('c-dust', 'dust-in', 'dust-out'),
      swapCreated('c-reuse'),
      refunded('c-reuse', 'same-tx', 'same-tx'),
      // The same transfer cited by two swaps: the earlier observation (event id) holds it.
      payoutSeen('c-first', 'dup', '01900000-0000-7000-8000-000000000001'),
      payoutSeen('c-second', 'dup', '01900000-0000-7000-8000-000000000002'),
      // A batch payout: one transaction, one output each.
      ...['c-batch-a', 'c-batch-b'].map((id, i) =>
        payoutSeen(id, 'batch', `01900000-0000-7000-8000-00000000001${i}`, [
          { to: A, index: 0 },
          { to: B, index: 1 },
        ]),
      ),
      chainObserved('c-old', {
        txid: 'old',
        blockTime: '2020-01-01T00:00:00.000Z',
        transfers: [{ asset: 'native', recipient: USER, amount: (17n * 10n ** 18n).toString(), index: 0 }],
      }),
      chainObserved('c-dust', {
        role: 'refund',
        txid: 'dust-out',
        currency: 'BTC',
        chain: 'bitcoin',
        family: 'utxo',
        asset: 'native',
        decimals: 8,
        confirmations: 3,
        requiredConfirmations: 2,
        transfers: [{ asset: 'native', recipient: REFUND_TO, amount: '546', index: 0 }],
      }),
      chainObserved('c-refused', {
        txid: 'liar',
        status: 'refused',
        proven: false,
        transfers: [],
        deadlinePassed: true,
        detail: 'the receipt names another transaction',
      }),
    ]);
    await waitForProjection(pool, log.topic);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
  });

  it('two swaps citing one transfer: the first MATCHED, the later MISMATCH "already evidences" it', async () => {
    expect((await checks('c-first')).by['chain.payout']!.verdict).toBe('MATCHED');
    const second = await checks('c-second');
    expect(second.by['chain.payout']).toMatchObject({
      verdict: 'MISMATCH',
      detail: expect.stringMatching(/already evidences partner-a\/c-first \(payout\)/),
    });
    expect(second.verdict).toBe('MISMATCH');
  });

  it('a batch payout paying each swap its own output: both MATCHED', async () => {
    for (const id of ['c-batch-a', 'c-batch-b'])
      expect((await checks(id)).by['chain.payout']!.verdict, id).toBe('MATCHED');
  });

  it('a transfer mined before the swap was created, at 17 times the amount: MISMATCH "predates the swap"', async () => {
    expect((await checks('c-old')).by['chain.payout']).toMatchObject({
      verdict: 'MISMATCH',
      detail: expect.stringMatching(/predates the swap/),
    });
  });

  it('a dust refund (546 satoshi against a 0.18 BTC payin): MISMATCH', async () => {
    expect((await checks('c-dust')).by['chain.refund']).toMatchObject({
      verdict: 'MISMATCH',
      delta: '-17999454',
      detail: expect.stringMatching(/short refund/),
    });
  });

  it("a refund hash that is the swap's payin hash, no chain source: MISMATCH", async () => {
    const judged = await checks('c-reuse', false);
    expect(judged.by['chain.refund']).toBeUndefined();
    expect(judged.by['hash.refund']).toMatchObject({ verdict: 'MISMATCH' });
    expect(judged.verdict).toBe('MISMATCH');
  });

  it('a refused answer past the deadline: UNVERIFIABLE "source unreliable", and a ledger exception', async () => {
    expect((await checks('c-refused')).by['chain.payout']).toMatchObject({
      verdict: 'UNVERIFIABLE',
      detail: expect.stringMatching(/^source unreliable/),
    });
    const finance = `${live}_fin`;
    const client = await pool.connect();
    try {
      await ensureFinanceViews(client, live, finance);
      const exceptions = await client.query<{ swap_id: string; reason: string }>(
        `select swap_id, reason from ${finance}.ledger_exceptions
          where reason like 'source unreliable%' or reason like 'one transfer, one claim%' order by swap_id`,
      );
      expect(exceptions.rows).toEqual([
        {
          swap_id: 'c-refused',
          reason: expect.stringMatching(
            /^source unreliable: .* liar .*the receipt names another transaction/,
          ),
        },
        {
          swap_id: 'c-second',
          reason:
            'one transfer, one claim: the payout transaction dup (transfer 0) already evidences partner-a/c-first (payout)',
        },
      ]);
    } finally {
      client.release();
    }
  });

  it('a claim folded after a later claimant was judged: the sweep judges that one again, MISMATCH', async () => {
    /** The swap's current chain.payout check (the swaps of this file fail other checks on purpose). */
    const verdict = async (id: string) =>
      (
        await pool.query<{ verdict: string; detail: string | null }>(
          `select c->>'verdict' as verdict, c->>'detail' as detail
             from reconciliations r cross join jsonb_array_elements(r.checks) c
            where r.provider_id = 'partner-a' and r.swap_id = $1 and c->>'name' = 'chain.payout'`,
          [id],
        )
      ).rows[0];
    const r = reconciler(true);
    // The later claimant's observation is folded and judged first (the earlier one's partition lagged).
    await log.append([
      ...finished('r-early', 'race'),
      ...finished('r-late', 'race'),
      payoutSeen('r-late', 'race', '01900000-0000-7000-8000-000000000031'),
    ]);
    await waitForProjection(pool, log.topic);
    await r.drainAll();
    await waitForProjection(pool, log.topic);
    expect(await verdict('r-late')).toMatchObject({ verdict: 'MATCHED' });
    // Then the earlier claim arrives: it holds the transfer, and nothing in the fold queues r-late again.
    await log.append([payoutSeen('r-early', 'race', '01900000-0000-7000-8000-000000000030')]);
    await waitForProjection(pool, log.topic);
    await r.drainAll();
    await waitForProjection(pool, log.topic);
    expect(await verdict('r-early')).toMatchObject({ verdict: 'MATCHED' });
    expect(await verdict('r-late')).toMatchObject({ verdict: 'MATCHED' });
    // The sweep finds it and judges it again on the same event.
    expect(await r.sweepMissed()).toBeGreaterThanOrEqual(1);
    await waitForProjection(pool, log.topic);
    expect(await verdict('r-late')).toMatchObject({
      verdict: 'MISMATCH',
      detail: expect.stringMatching(/already evidences partner-a\/r-early \(payout\)/),
    });
    // Judged MISMATCH, it is not swept again.
    expect(await r.sweepMissed()).toBe(0);
    await r.stop();
  });

  it('a replay from offset 0 rebuilds the same claims: EQUAL', async () => {
    const claims = await pool.query(
      `select swap_id, txid, transfer from chain_claims order by txid, swap_id`,
    );
    expect(claims.rows).toEqual([
      { swap_id: 'c-batch-a', txid: 'batch', transfer: '0' },
      { swap_id: 'c-batch-b', txid: 'batch', transfer: '1' },
      { swap_id: 'c-first', txid: 'dup', transfer: '0' },
      { swap_id: 'c-second', txid: 'dup', transfer: '0' },
      { swap_id: 'c-dust', txid: 'dust-out', transfer: '0' },
      { swap_id: 'c-old', txid: 'old', transfer: '0' },
      { swap_id: 'r-early', txid: 'race', transfer: '0' },
      { swap_id: 'r-late', txid: 'race', transfer: '0' },
    ]);
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-chain-verdicts-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: live,
      logger,
      batchEvents: 7,
    });
    expect(result.rebuilt.tables['chain_claims']!.rows).toBe(8);
    expect(result.rebuilt.checksum).toBe((await checksumOf(pool, live)).checksum);
    expect(result.equal).toBe(true);
  });
});
