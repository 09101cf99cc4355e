import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { replay } from '../../src/ops/replay.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { testKafka, testStack, uniqueName } from '../support/context.ts';
import { checksumOf, freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';
import { runCli, runCliInProcess } from '../support/cli.ts';
import { swapKey } from '../../src/events/keys.ts';
import { swapEventPartitioner } from '../../src/events/producer.ts';

describe('dead letters, corrections and swap show (real stack, CLI as a process)', () => {
  const stack = testStack();
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let schema: string;
  let pool: pg.Pool;
  let running: RunningProjector;
  let env: ReturnType<typeof projectionConfig>;
  const dir = mkdtempSync(join(tmpdir(), 'dlq-'));

  async function poison(key: string) {
    const producer = testKafka('poison').producer({ createPartitioner: swapEventPartitioner });
    await producer.connect();
    await producer.send({
      topic: log.topic,
      acks: -1,
      messages: [{ key, value: Buffer.from('{"not":"avro"}') }],
    });
    await producer.disconnect();
  }

  async function endOffsets() {
    const admin = testKafka('offsets').admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(log.topic)).map((p) => p.high);
    } finally {
      await admin.disconnect();
    }
  }

  const journalOf = async (key: string) =>
    (
      await pool.query(
        `select event_type, outcome, reason, changes, "offset" from event_journal where aggregate_key = $1 order by "offset"`,
        [key],
      )
    ).rows;

  beforeAll(async () => {
    log = await freshEventLog(3);
    schema = uniqueName('dlq', '_');
    await migrateProjection(stack.databaseUrl, schema);
    pool = createPool(stack.databaseUrl, { searchPath: schema });
    env = projectionConfig(log, schema);
    running = await startProjector(env, createLogger({ level: 'silent' }));
    await log.append([swapCreated('dl-s1'), swapCreated('dl-s2')]);
    await poison(swapKey('partner-a', 'dl-s1'));
    await log.append([
      statusReported('dl-s1', 'PENDING', { payinTransactionId: 'in-1' }),
      statusReported('dl-s1', 'FINISHED', { amount: '0.25', payoutTransactionId: 'out-1' }),
      statusReported('dl-s2', 'PENDING'),
    ]);
    await waitForProjection(pool, log.topic);
  });

  afterAll(async () => {
    await running?.stop();
    await pool?.end();
    await log?.close();
  });

  it('dead-letters the poison message with its reason and origin, parks its swap, leaves others alone', async () => {
    const dl = (await pool.query('select * from dead_letters')).rows;
    expect(dl).toHaveLength(1);
    expect(dl[0]).toMatchObject({
      aggregate_key: swapKey('partner-a', 'dl-s1'),
      status: 'open',
      reason: 'not in the schema registry wire format',
    });
    expect(Buffer.from(dl[0].value_base64, 'base64').toString()).toBe('{"not":"avro"}');
    expect((await journalOf(swapKey('partner-a', 'dl-s1'))).map((r) => r.outcome)).toEqual([
      'applied',
      'parked',
      'parked',
    ]);
    const states = await pool.query('select swap_id, status from swaps order by swap_id');
    expect(states.rows).toEqual([
      { swap_id: 'dl-s1', status: 'CREATED' },
      { swap_id: 'dl-s2', status: 'PENDING' },
    ]);

    // A copy went to the dead-letter topic with the reason and where it came from.
    const consumer = testKafka('dlq-reader').consumer({ groupId: uniqueName('dlq-reader') });
    await consumer.connect();
    await consumer.subscribe({ topic: log.dlqTopic, fromBeginning: true });
    const headers = await new Promise<Record<string, string>>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) =>
          resolve(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]))),
      });
    });
    await consumer.disconnect();
    expect(headers).toMatchObject({
      'dead-letter-id': dl[0].dead_letter_id,
      'dead-letter-reason': 'not in the schema registry wire format',
      'original-topic': log.topic,
      'original-partition': String(dl[0].partition),
      'original-offset': String(dl[0].offset),
    });

    const listed = await runCli(['dlq', 'list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(dl[0].dead_letter_id);
    expect(listed.stdout).toContain('held 2');
  });

  // Refusals through the CLI's `main` in this process; each command's success runs as a process below.
  it('refuses an operator mistake with exit 2 and appends nothing', async () => {
    const before = await endOffsets();
    const unknown = await runCliInProcess(['dlq', 'retry', 'nope:0:0', '--by', 'alice'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no dead letter nope:0:0');
    const id = (await pool.query('select dead_letter_id from dead_letters')).rows[0].dead_letter_id;
    const noOperator = await runCliInProcess(['dlq', 'discard', id, '--reason', 'x'], env);
    expect(noOperator.code).toBe(2);
    expect(noOperator.stderr).toContain('--by is required');
    const badAmount = await runCliInProcess(
      ['swap', 'correct', 'dl-s2', '--amount', '1e5', '--reason', 'r', '--by', 'a'],
      env,
    );
    expect(badAmount.code).toBe(2);
    expect(badAmount.stderr).toContain('--amount must be a non-negative decimal amount');
    expect(await endOffsets()).toEqual(before);
  });

  it('dlq retry with a repaired event applies it at the dead letter position, then the held events in order', async () => {
    const id = (await pool.query('select dead_letter_id from dead_letters')).rows[0].dead_letter_id;
    const repaired = statusReported('dl-s1', 'ON_HOLD', {}, { source: 'webhook' });
    const file = join(dir, 'repaired.json');
    writeFileSync(file, JSON.stringify(repaired));
    const r = await runCli(
      ['dlq', 'retry', id, '--by', 'alice', '--reason', 'partner resent it', '--event-file', file],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    await waitForProjection(pool, log.topic);
    const journal = await journalOf(swapKey('partner-a', 'dl-s1'));
    expect(journal.map((j) => [j.event_type, j.outcome, j.changes?.status ?? null])).toEqual([
      ['SwapCreated', 'applied', [null, 'CREATED']],
      ['StatusReported', 'applied', ['CREATED', 'ON_HOLD']], // the repaired event, at the dead letter's offset
      ['StatusReported', 'applied', ['ON_HOLD', 'PENDING']],
      ['StatusReported', 'applied', ['PENDING', 'FINISHED']],
      ['DeadLetterRetried', 'applied', null],
    ]);
    expect(journal[4].reason).toBe(`dead letter ${id} retried by alice: partner resent it`);
    const swap = await pool.query(`select status, final from swaps where swap_id = 'dl-s1'`);
    expect(swap.rows[0]).toEqual({ status: 'FINISHED', final: true });
  });

  it('dlq discard is journaled with its reason and releases the held events', async () => {
    await log.append([swapCreated('dl-s3')]);
    await poison(swapKey('partner-a', 'dl-s3'));
    await log.append([statusReported('dl-s3', 'EXPIRED')]);
    await waitForProjection(pool, log.topic);
    const id = (
      await pool.query(`select dead_letter_id from dead_letters where aggregate_key = 'swap:partner-a:dl-s3'`)
    ).rows[0].dead_letter_id;
    const r = await runCli(
      ['dlq', 'discard', id, '--reason', 'garbage from a test producer', '--by', 'bob'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    await waitForProjection(pool, log.topic);
    const journal = await journalOf(swapKey('partner-a', 'dl-s3'));
    expect(journal.map((j) => [j.event_type, j.outcome])).toEqual([
      ['SwapCreated', 'applied'],
      ['StatusReported', 'applied'],
      ['DeadLetterDiscarded', 'applied'],
    ]);
    expect(journal[2].reason).toBe(`dead letter ${id} discarded by bob: garbage from a test producer`);
    const dl = await pool.query(
      'select status, resolved_by, resolution from dead_letters where dead_letter_id = $1',
      [id],
    );
    expect(dl.rows[0]).toEqual({
      status: 'discarded',
      resolved_by: 'bob',
      resolution: 'garbage from a test producer',
    });
  });

  it('swap correct amends a final swap, journaled with operator, reason and change; swap show displays it', async () => {
    const r = await runCli(
      ['swap', 'correct', 'dl-s1', '--amount', '0.3', '--reason', 'statement 42', '--by', 'carol'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    await waitForProjection(pool, log.topic);
    const swap = await pool.query(`select amount_to, corrected from swaps where swap_id = 'dl-s1'`);
    expect(swap.rows[0]).toEqual({ amount_to: '0.3', corrected: true });
    const correction = (await journalOf(swapKey('partner-a', 'dl-s1'))).at(-1);
    expect(correction).toMatchObject({
      event_type: 'SwapCorrected',
      outcome: 'applied',
      reason: 'corrected by carol: statement 42',
      changes: { amountTo: ['0.25', '0.3'] },
    });

    const shown = await runCli(['swap', 'show', 'dl-s1'], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/status FINISHED \(final\)/);
    expect(shown.stdout).toMatch(
      /SwapCorrected\s+ops\s+APPLIED\s+amountTo 0\.25→0\.3\s+\(corrected by carol: statement 42\)/,
    );
    const json = JSON.parse((await runCliInProcess(['swap', 'show', 'dl-s1', '--json'], env)).stdout);
    expect(json.timeline.map((e: { outcome: string }) => e.outcome)).toEqual([
      'applied',
      'applied',
      'applied',
      'applied',
      'applied',
      'applied',
    ]);
    expect(json.swap.amount_to).toBe('0.3');
    expect((await runCliInProcess(['swap', 'show', 'ghost'], env)).code).toBe(1);
  });

  it('replay rebuilds the dead letters, their resolutions and the correction with the same checksum', async () => {
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: schema,
      logger: createLogger({ level: 'silent' }),
    });
    expect(result.rebuilt.tables.dead_letters!.rows).toBe(2);
    expect(result.rebuilt.checksum).toBe((await checksumOf(pool, schema)).checksum);
    expect(result.equal).toBe(true);
  });
});
