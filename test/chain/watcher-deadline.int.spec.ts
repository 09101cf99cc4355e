import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { Transaction } from 'bitcoinjs-lib';
import { createTestClient, createWalletClient, http, type Address, type Hash } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { chainClients, parseChainSources } from '../../src/chain/index.ts';
import { ChainWatcher, watchedTransactions } from '../../src/chainwatch/watcher.ts';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import type { ChainTransactionObserved, SwapEvent } from '../../src/events/types.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { DEV_KEYS, startEvmNode, type EvmNode } from '../../scripts/chain/evm-node.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * Sources held to account, on the real stack: a UTXO source serving bytes that do not hash to the txid is
 * appended as a `refused` observation (not only logged); a payout still in the mempool of a real EVM node past
 * its deadline is appended with deadlinePassed, looked at until its currency's final bound
 * (lookAfterDeadlineMinutes after that observation), then never again.
 */
const USER = '0x00000000000000000000000000000000000000a1' as Address;

/** A transaction's bytes (its input made up): what the lying source serves for every txid. */
function someTransaction(): Transaction {
  const tx = new Transaction();
  tx.addInput(randomBytes(32), 0);
  tx.addOutput(Buffer.from('0014751e76e8199196d454941c45d1b3a323f1433bd6', 'hex'), 5_000_000n);
  return tx;
}

describe('chain watcher: refused answers and the final bound (real stack, real EVM node)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'silent' });
  let node: EvmNode;
  let liar: Server;
  let liarUrl: string;
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let pool: pg.Pool;
  let running: RunningProjector;
  let stuck: Hash;
  const forged = someTransaction();
  const claimed = 'ab'.repeat(32);

  const sources = () =>
    parseChainSources({
      sources: {
        local: { family: 'evm', urlEnv: 'LOCAL_EVM_URL', ratePerSecond: 100 },
        bitcoin: { family: 'utxo', urlEnv: 'LIAR_ESPLORA_URL', ratePerSecond: 100 },
      },
      currencies: {
        ETH: {
          source: 'local',
          confirmations: 1,
          decimals: 18,
          deadlineMinutes: 60,
          lookAfterDeadlineMinutes: 30,
        },
        BTC: { source: 'bitcoin', confirmations: 1, decimals: 8, deadlineMinutes: 60 },
      },
    });

  beforeAll(async () => {
    node = await startEvmNode();
    // Nothing is mined from here on: the payout stays in the mempool.
    await createTestClient({ chain: hardhat, mode: 'hardhat', transport: http(node.url) }).setAutomine(false);
    stuck = await createWalletClient({
      account: privateKeyToAccount(DEV_KEYS[2]),
      chain: hardhat,
      transport: http(node.url),
    }).sendTransaction({ to: USER, value: 10n ** 18n });
    liar = createServer((req, res) => {
      if (/^\/tx\/[0-9a-f]{64}\/hex$/.test(req.url ?? '')) return res.end(forged.toHex());
      res.statusCode = 404;
      res.end('Transaction not found');
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    liarUrl = `http://127.0.0.1:${(liar.address() as { port: number }).port}`;

    log = await freshEventLog(2);
    const live = uniqueName('chainbound', '_');
    await migrateProjection(stack.databaseUrl, live);
    pool = createPool(stack.databaseUrl, { searchPath: live });
    running = await startProjector(projectionConfig(log, live), logger);
    // Both swaps ended at the test clock's time, weeks before now: past their deadlines.
    await log.append([
      swapCreated('w-stuck', { request: { payoutAddress: USER } }),
      statusReported('w-stuck', 'FINISHED', { amount: '1', payoutTransactionId: stuck }),
      swapCreated('w-lied'),
      statusReported('w-lied', 'FINISHED', { amount: '1', payinTransactionId: claimed }),
    ]);
    await waitForProjection(pool, log.topic);
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
    await new Promise((r) => liar?.close(r));
    await node?.stop();
  });

  it('appends the refused answer and the unconfirmed payout past its deadline; stops looking at the final bound', async () => {
    const s = sources();
    const appended: SwapEvent[] = [];
    let clock = Date.now();
    const watcher = new ChainWatcher({
      projection: pool,
      appender: {
        async appendAll(events) {
          await log.appender.appendAll(events);
          appended.push(...events);
        },
      },
      sources: s,
      clients: chainClients(s, { LOCAL_EVM_URL: node.url, LIAR_ESPLORA_URL: liarUrl }),
      logger,
      baseBackoffMs: 0,
      now: () => clock,
    });
    const first = await watcher.round();
    expect(first).toMatchObject({ looked: 2, appended: 2, failed: 0 });
    const bySwap = new Map(appended.map((e) => [e.swapId, e.payload as ChainTransactionObserved]));
    expect(bySwap.get('w-lied')).toMatchObject({
      role: 'payin',
      txid: claimed,
      status: 'refused',
      transfers: [],
      proven: false,
      deadlinePassed: true,
      block: null,
    });
    expect(bySwap.get('w-lied')!.detail).toContain(
      `the bytes served for ${claimed} hash to ${forged.getId()}`,
    );
    expect(bySwap.get('w-stuck')).toMatchObject({
      role: 'payout',
      status: 'pending',
      confirmations: 0,
      deadlinePassed: true,
      blockTime: null,
      fee: null,
      contractCall: false,
      transfers: [{ asset: 'native', recipient: USER, amount: (10n ** 18n).toString(), index: null }],
    });
    await waitForProjection(pool, log.topic);

    const bounds = new Map(
      [...s.currencies.values()].map((c) => [c.currency, c.lookAfterDeadlineMinutes * 60_000]),
    );
    const watchedIds = async (at: number) =>
      (await watchedTransactions(pool, 100, bounds, at)).map((w) => w.swapId);
    // Within the bound it is still looked at (it may yet be mined); nothing changed, nothing appended.
    clock += 29 * 60_000;
    expect(await watchedIds(clock)).toContain('w-stuck');
    appended.length = 0;
    await watcher.round();
    expect(appended.filter((e) => e.swapId === 'w-stuck')).toEqual([]);
    // Past it: never again, even by a fresh watcher (the bound is read from the log, not memory).
    clock += 2 * 60_000;
    expect(await watchedIds(clock)).not.toContain('w-stuck');
    const fresh = new ChainWatcher({
      projection: pool,
      appender: log.appender,
      sources: s,
      clients: chainClients(s, { LOCAL_EVM_URL: node.url, LIAR_ESPLORA_URL: liarUrl }),
      logger,
      now: () => clock,
    });
    const after = await fresh.round();
    expect(after.watched).toBe((await watchedIds(clock)).length);
  });
});
