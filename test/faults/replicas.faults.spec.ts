import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePlatform } from '../../src/db/migrate.ts';
import { EventAppender, EventCodec } from '../../src/events/index.ts';
import { createTopics } from '../../src/events/topics.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';
import { startPartnerSimulator, type PartnerSimulator } from '../../src/simulator/index.ts';
import { Supervisor, type WorkerSpec } from '../../src/supervisor/supervisor.ts';
import { freePort } from '../../src/demo/provision.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { runCli } from '../support/cli.ts';
import { freshProjection, testKafka, testStack, uniqueName } from '../support/context.ts';
import { emptyEvmNode, overlapping, readTopic, statusProxy } from './replicas-support.ts';
import { waitForProjection } from '../support/event-log.ts';
import { postStatus, testProvider } from '../ingest/webhook-support.ts';
import { ADDRESSES, idempotencyKey, nonce } from '../gateway/support.ts';
import { CLUSTER_BROKERS, useClusterStack } from './cluster.ts';
import { sleep } from './rig.ts';

/**
 * Two instances of every worker at once (projector, reconciler, webhook, gateway with its outbox relay,
 * poller, chain watcher), real processes under one Supervisor on the three-broker stack, under load (unique webhook reports
 * on both webhooks, swaps created through both gateways at a partner simulator that moves them to FINISHED
 * and pushes webhooks, both pollers polling and confirming), and one instance of each kind SIGKILLed mid-load
 * (the supervisor restarts it). Asserted: no acknowledged report lost or doubled, the journal equal to the
 * topic (exactly once) and a replay EQUAL, every outbox row in the log (a relay killed between
 * Kafka's acknowledgement and its commit may publish one twice: same event id, folded once), every verdict appended once per
 * event it is based on, no swap's GET /status asked by two pollers at once (timed by a proxy in front of
 * the partner), and no payout observed twice on its chain (a node that knows none: one observation each).
 */
useClusterStack();
const log = (line: string) => console.log(`[faults] ${line}`);
const KINDS = ['projector', 'reconciler', 'webhook', 'gateway', 'poller', 'chain'] as const;

describe(`two instances of every worker on ${CLUSTER_BROKERS} brokers, one of each SIGKILLed under load`, () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  });

  it('nothing lost or doubled, every outbox row in the log, each verdict once per event, no swap polled by two at once', async () => {
    const stack = testStack();
    const topic = uniqueName('replicas');
    const admin = testKafka('replicas-topics').admin();
    await admin.connect();
    try {
      const report = await createTopics(admin, {
        eventsTopic: topic,
        dlqTopic: `${topic}.dlq`,
        partitions: 12,
      });
      expect(report.every((t) => t.replicationFactor === 3 && t.minInsyncReplicas === 2)).toBe(true);
    } finally {
      await admin.disconnect();
    }
    await migratePlatform(stack.databaseUrl);
    const projection = await freshProjection('replicas');
    stops.push(() => projection.pool.end());

    // The partner: a simulator moving each created swap PENDING → EXCHANGING → FINISHED, its webhooks to webhook-1.
    const simProvider = uniqueName('sim');
    const hookKey = generateApiKey();
    const wallet = generateApiKey();
    const webhookPorts = [await freePort(), await freePort()];
    const gatewayPorts = [await freePort(), await freePort()];
    const sim: PartnerSimulator = await startPartnerSimulator({
      providerId: simProvider,
      webhook: { url: `http://127.0.0.1:${webhookPorts[0]}`, apiKey: hookKey.key },
      progression: { advanceOn: { everyMs: 1500 }, script: ['PENDING', 'EXCHANGING', 'FINISHED'] },
    });
    stops.push(() => sim.close());
    const proxy = await statusProxy(sim.url);
    stops.push(() => proxy.close());
    const key = sim.partnerKey();
    // The webhook load's provider: unique reports on swaps seeded in the log (its id holds ".load.").
    const load = testProvider('load');
    const providersFile = join(mkdtempSync(join(tmpdir(), 'replicas-providers-')), 'providers.yaml');
    writeFileSync(
      providersFile,
      [
        // testProvider's entry writes its partner header in clear (a test fixture, not a secret).
        'allowLiteralSecrets: true',
        'providers:',
        `  - id: ${simProvider}`,
        `    client: { baseUrl: "${proxy.url}", timeouts: { readMs: 5000, swapMs: 5000 }, retry: { maxAttempts: 2, baseDelayMs: 50 } }`,
        `    webhookKeys: [{ keyId: k1, sha256: "${hookKey.sha256}" }]`,
        `    payloadKeys: [{ keyId: ${key.keyId}, curve: ${key.curve}, publicKey: "${String(key.publicKey)}", validFrom: "${key.validFrom}" }]`,
        '    currencies: { btc: BTC, eth: ETH, ltc: LTC, xrp: XRP, usdt: USDT, sol: SOL, bat: BAT, pol: POL }',
        '    statusMap: { EXCHANGING: PENDING, SENDING: PENDING }',
        '    webhookNetworkFees: referral',
        '    pollIntervalSeconds: 1',
        '    rateLimit: { perSecond: 1000, burst: 1000 }',
        load.yaml,
        '',
      ].join('\n'),
    );
    // The chain watchers look the ETH payouts up on a node that knows none of them.
    const evm = await emptyEvmNode();
    stops.push(() => evm.close());
    const chainSources = join(mkdtempSync(join(tmpdir(), 'replicas-chain-')), 'chain-sources.json');
    writeFileSync(
      chainSources,
      JSON.stringify({
        sources: { evm: { family: 'evm', urlEnv: 'REPLICAS_EVM_URL', ratePerSecond: 100, timeoutMs: 2000 } },
        currencies: {
          ETH: { source: 'evm', confirmations: 2, asset: 'native', decimals: 18, deadlineMinutes: 60 },
        },
      }),
    );
    const codec = new EventCodec(stack.registryUrl, topic);
    const seed = new EventAppender({
      kafka: testKafka('replicas-seed'),
      codec,
      topic,
      sendTimeoutMs: 30_000,
    });
    await seed.start();
    const loadSwaps = Array.from({ length: 100 }, (_, i) => `rl-${i}`);
    await seed.appendAll(loadSwaps.map((id) => swapCreated(id, { providerId: load.id })));
    await seed.stop();

    const env = {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: topic,
      DLQ_TOPIC: `${topic}.dlq`,
      PROJECTION_SCHEMA: projection.schema,
      PROVIDERS_FILE: providersFile,
      KAFKA_CLIENT_ID: 'faults-replicas',
      LOG_LEVEL: 'warn',
      WEBHOOK_HOST: '127.0.0.1',
      GATEWAY_HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
      GATEWAY_API_KEY_DIGESTS: wallet.sha256,
      OUTBOX_RELAY_INTERVAL_MS: '500',
      POLL_CRON: '* * * * * *',
      POLL_PROVIDERS: simProvider,
      CATALOG_SYNC_CRON: '*/10 * * * * *',
      RECONCILER_INTERVAL_MS: '1000',
      RECONCILER_CONFIRM_WAIT_MS: '10000',
      CHAIN_SOURCES_FILE: chainSources,
      REPLICAS_EVM_URL: evm.url,
      CHAIN_WATCH_INTERVAL_MS: '1000',
    };
    const specs: WorkerSpec[] = [];
    for (const kind of KINDS)
      for (const r of [0, 1]) {
        const metrics = await freePort();
        specs.push({
          name: `${kind}-${r + 1}`,
          args: {
            projector: ['projector', 'run'],
            reconciler: ['reconciler', 'run'],
            webhook: ['webhook', 'serve'],
            gateway: ['gateway', 'serve'],
            poller: ['poller', 'run'],
            chain: ['chain', 'watch'],
          }[kind],
          env: {
            METRICS_PORT: String(metrics),
            WEBHOOK_PORT: String(webhookPorts[r]),
            GATEWAY_PORT: String(gatewayPorts[r]),
          },
          readyUrl: `http://127.0.0.1:${metrics}`,
        });
      }
    const lines: string[] = [];
    // The projectors apart: the writers stop first, so the projectors fold their last events before they stop.
    const isProjector = (w: WorkerSpec) => w.name.startsWith('projector');
    const folding = new Supervisor(specs.filter(isProjector), { write: (l) => lines.push(l), env });
    const writing = new Supervisor(
      specs.filter((w) => !isProjector(w)),
      { write: (l) => lines.push(l), env },
    );
    const supervisor = {
      readiness: () => ({ ...folding.readiness(), ...writing.readiness() }),
      pids: () => ({ ...folding.pids(), ...writing.pids() }),
    };
    folding.start();
    writing.start();
    stops.push(
      () => folding.stop(),
      () => writing.stop(),
    );
    const until = Date.now() + 90_000;
    while (!Object.values(supervisor.readiness()).every(Boolean)) {
      if (Date.now() > until) throw new Error(`workers not ready:\n${lines.slice(-40).join('\n')}`);
      await sleep(500);
    }
    log(`ready: ${Object.keys(supervisor.readiness()).join(', ')}`);

    // Load: unique reports on both webhooks; float swaps created through both gateways.
    const acknowledged = new Set<string>();
    const byStatus: Record<string, number> = {};
    const created: string[] = [];
    const creations: Record<string, number> = {};
    let loading = true;
    let next = 0;
    const posters = Array.from({ length: 12 }, async (_, c) => {
      while (loading) {
        const n = next++;
        const amount = `${n}.5`;
        const url = `http://127.0.0.1:${webhookPorts[c % 2]}`;
        const r = await postStatus(
          url,
          loadSwaps[n % loadSwaps.length]!,
          { providerId: load.id, providerStatus: 'PENDING', amount },
          { 'x-api-key': load.key.key },
        ).catch((e: Error) => ({ status: 0, body: e.message }));
        byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
        if (r.status === 200) acknowledged.add(amount);
        else await sleep(100); // the killed instance's partner retries a moment later
      }
    });
    const creators = Array.from({ length: 2 }, async (_, c) => {
      while (loading) {
        const res = await fetch(`http://127.0.0.1:${gatewayPorts[c]}/v1/swaps`, {
          method: 'POST',
          headers: {
            'x-api-key': wallet.key,
            'content-type': 'application/json',
            'idempotency-key': idempotencyKey(),
          },
          body: JSON.stringify({
            providerId: simProvider,
            tradeMethod: 'float',
            from: 'btc',
            to: 'eth',
            amount: '0.01',
            ...ADDRESSES,
            nonce: nonce(),
          }),
        }).catch(() => undefined);
        const status = String(res?.status ?? 0);
        creations[status] = (creations[status] ?? 0) + 1;
        const body = res ? ((await res.json().catch(() => ({}))) as { swapId?: string }) : {};
        if (res?.ok && body.swapId) created.push(body.swapId);
        await sleep(res?.ok ? 100 : 500);
      }
    });

    await sleep(8000);
    const kills: string[] = [];
    for (const kind of KINDS) {
      const name = `${kind}-1`;
      const pid = supervisor.pids()[name];
      if (pid === undefined) throw new Error(`${name} is not running:\n${lines.slice(-40).join('\n')}`);
      process.kill(pid, 'SIGKILL');
      kills.push(`${name} (pid ${pid})`);
      log(`SIGKILL ${name} (pid ${pid})`);
      await sleep(2000);
    }
    await sleep(12_000);
    loading = false;
    await Promise.all([...posters, ...creators]);
    log(
      `load stopped: ${created.length} swaps created (${JSON.stringify(creations)}), webhook answers ${JSON.stringify(byStatus)}`,
    );

    // Settle: every outbox row published, the created swaps final and judged, the projection caught up.
    const settled = Date.now() + 60_000;
    for (;;) {
      const r = await projection.pool.query<{ pending: number; open: number; unjudged: number }>(
        `select (select count(*)::int from platform.outbox where topic = $1 and published_at is null) as pending,
                (select count(*)::int from swaps where provider_id = $2 and not final) as open,
                (select count(*)::int from swaps s where provider_id = $2 and final
                   and not exists (select 1 from reconciliations r where r.provider_id = s.provider_id and r.swap_id = s.swap_id)) as unjudged`,
        [topic, simProvider],
      );
      const s = r.rows[0]!;
      if (s.pending === 0 && s.open === 0 && s.unjudged === 0) break;
      if (Date.now() > settled) {
        log(`not settled in 60 s: ${JSON.stringify(s)}`);
        break;
      }
      await sleep(1000);
    }
    const stopCode = Math.max(
      await writing.stop(),
      await waitForProjection(projection.pool, topic, 60_000).then(() => folding.stop()),
    );

    const inLog = await readTopic(topic, codec);
    let lost = 0;
    let doubled = 0;
    for (const a of acknowledged) {
      const n = inLog.amounts.get(a) ?? 0;
      if (n === 0) lost++;
      if (n > 1) doubled++;
    }
    const q = async (sql: string, values: unknown[] = []) =>
      (await projection.pool.query<{ n: number }>(sql, values)).rows[0]!.n;
    const journaled = await q('select count(*)::int as n from event_journal');
    const outboxRows = await projection.pool.query<{ event_id: string; published: boolean }>(
      'select event_id, published_at is not null as published from platform.outbox where topic = $1',
      [topic],
    );
    const outboxUnpublished = outboxRows.rows.filter((r) => !r.published).length;
    // At least once by design: a relay killed between Kafka's acknowledgement and its commit publishes the
    // row again (README, the outbox relay's one window); the copy has the row's event id, folded once.
    const outboxMissing = outboxRows.rows.filter((r) => (inLog.ids.get(r.event_id) ?? 0) === 0).length;
    const outboxTwice = outboxRows.rows.filter((r) => (inLog.ids.get(r.event_id) ?? 0) > 1).length;
    const verdicts = await q('select count(*)::int as n from reconciliation_history');
    const verdictsTwice = await q(
      'select count(*)::int as n from (select based_on_event_id from reconciliation_history group by 1 having count(*) > 1) t',
    );
    const judged = await q('select count(*)::int as n from swaps where provider_id = $1 and final', [
      simProvider,
    ]);
    const idsTwice = [...inLog.ids.values()].filter((n) => n > 1).length;
    const observedTwice = [...inLog.observed.values()].filter((n) => n > 1).length;
    const overlaps = overlapping(proxy.calls);
    const replay = await runCli(['replay'], { ...env, REPLAY_WORKERS: '1' } as Record<string, string>);
    const verdict =
      /\b(EQUAL|DIFFERENT)\b/.exec(replay.stdout)?.[1] ?? `failed: ${replay.stderr.slice(-300)}`;
    const restarts = lines.filter((l) => /exited \(signal SIGKILL\); restarting/.test(l)).length;
    console.log(
      `[faults] two of each worker: events ${inLog.events}, journaled ${journaled}, acknowledged ${acknowledged.size} ` +
        `(${Object.entries(byStatus)
          .map(([s, n]) => `${s}:${n}`)
          .join(
            ' ',
          )}; 0: refused while its instance was down, no load balancer here), swaps created ${created.length} ` +
        `(final ${judged}), kills [${kills.join('; ')}] (restarted by the supervisor ${restarts}), lost ${lost}, doubled ${doubled}, ` +
        `event ids twice in the log ${idsTwice}, chain observations ${inLog.observed.size} transactions (observed twice ${observedTwice}), outbox rows ${outboxRows.rows.length} (not in the log ${outboxMissing}, twice in it ${outboxTwice}, unpublished ${outboxUnpublished}), ` +
        `verdicts ${verdicts} (twice on one event ${verdictsTwice}), GET /status ${proxy.calls.length} (two pollers at once ${overlaps}), replay ${verdict}`,
    );
    expect(byStatus['500'] ?? 0, 'answers 500').toBe(0);
    expect(acknowledged.size).toBeGreaterThan(100);
    expect(created.length).toBeGreaterThan(10);
    expect(restarts, 'each killed instance restarted').toBe(KINDS.length);
    expect(lost, 'acknowledged reports not in the log').toBe(0);
    expect(doubled, 'acknowledged reports in the log twice').toBe(0);
    expect(journaled, 'journal rows (exactly once) against events in the topic').toBe(inLog.events);
    expect(outboxRows.rows.length).toBeGreaterThanOrEqual(created.length);
    expect(outboxUnpublished, 'outbox rows never published').toBe(0);
    expect(outboxMissing, 'outbox rows not in the log').toBe(0);
    expect(verdicts).toBeGreaterThan(0);
    expect(verdictsTwice, 'verdicts appended twice on one event').toBe(0);
    expect(proxy.calls.length).toBeGreaterThan(created.length);
    expect(overlaps, 'GET /status of one swap by two pollers at once').toBe(0);
    expect(inLog.observed.size, 'payouts observed on the chain').toBeGreaterThan(0);
    expect(observedTwice, 'one transaction observed twice (two watchers at once)').toBe(0);
    expect(verdict).toBe('EQUAL');
    expect(
      stopCode,
      `the supervisor stopped cleanly:\n${lines
        .filter((l) => /\bup\b/.test(l))
        .slice(-20)
        .join('\n')}`,
    ).toBe(0);
  }, 240_000);
});
