import http from 'node:http';
import type { AddressInfo } from 'node:net';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { projectBatch } from '../../src/projector/batch.ts';
import { rejectionKind } from '../../src/projector/decision.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { replay } from '../../src/ops/replay.ts';
import { deadLetterRetriedEvent } from '../../src/ops/operator-events.ts';
import { EventCodec, encodeEvent } from '../../src/events/codec.ts';
import { envelopeSchema } from '../../src/events/catalog.ts';
import { swapKey } from '../../src/events/keys.ts';
import { swapEventPartitioner } from '../../src/events/producer.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import {
  testKafka,
  testStack,
  freshProjection,
  freshProjectionAtStart,
  uniqueName,
} from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * Issue 34, finding 8, on the real stack: the narrow paths by which the log could still stop, or a replay
 * differ. A message whose envelope no journal row could hold is dead-lettered (the partition goes on); a
 * dead letter's retry that meets a registry not answering is tried again, never journaled as rejected;
 * a fold that throws is a `fold_error`, not "the database refused".
 */

type Mode = 'pass' | 'unknown' | 'unknown-once' | 'down';

/** A schema registry in front of the real one that can say "unknown" (404) or fail (503) for one id. */
async function registryProxy(target: string) {
  const state: { id: number | undefined; mode: Mode; asked: number } = {
    id: undefined,
    mode: 'pass',
    asked: 0,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (state.id !== undefined && req.url?.startsWith(`/schemas/ids/${state.id}`)) {
          state.asked++;
          const mode = state.mode;
          if (mode === 'unknown-once') state.mode = 'pass';
          if (mode === 'unknown' || mode === 'unknown-once') {
            res.writeHead(404, { 'content-type': 'application/json' });
            return res.end(JSON.stringify({ error_code: 40403, message: 'Schema not found' }));
          }
          if (mode === 'down') {
            res.writeHead(503, { 'content-type': 'application/json' });
            return res.end(JSON.stringify({ error_code: 503, message: 'registry unavailable' }));
          }
        }
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const r = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          ...(body && req.method !== 'GET' ? { body } : {}),
        });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      })().catch((e: unknown) => {
        res.writeHead(502);
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the log does not stop, and a replay does not differ, on its narrow paths (real stack)', () => {
  const stack = testStack();
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  let proxy: Awaited<ReturnType<typeof registryProxy>>;

  beforeAll(async () => {
    log = await freshEventLog(1);
    projection = await freshProjection('log_edges');
    proxy = await registryProxy(stack.registryUrl);
    projector = await startProjector(
      { ...projectionConfig(log, projection.schema), SCHEMA_REGISTRY_URL: proxy.url },
      createLogger({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await projector?.stop();
    await projection?.pool.end();
    await log?.close();
    await proxy?.close();
  });

  async function positionAtEnd(): Promise<void> {
    await waitForProjection(projection.pool, log.topic);
    const admin = testKafka('log-edges').admin();
    await admin.connect();
    try {
      const [end] = await admin.fetchTopicOffsets(log.topic);
      const cp = await projection.pool.query(
        'select next_offset from projector_checkpoints where topic = $1',
        [log.topic],
      );
      expect(cp.rows[0].next_offset).toBe(end!.high);
    } finally {
      await admin.disconnect();
    }
  }

  const outcomes = async (swapId: string) =>
    (
      await projection.pool.query(
        `select event_type, outcome, reason from event_journal where swap_id = $1 order by "offset"`,
        [swapId],
      )
    ).rows.map((r) => r.outcome);

  it.each([
    [
      'a day that does not exist',
      { occurredAt: '2026-02-30T10:00:00Z' },
      /occurredAt .*day 30 does not exist/,
    ],
    ['an offset beyond ±15:59', { recordedAt: '2026-03-01T10:00:00+16:00' }, /recordedAt .*offset \+16:00/],
    ['year 0000', { occurredAt: '0000-06-01T00:00:00Z' }, /occurredAt .*year 0000/],
    [
      'a providerId with U+0000',
      { providerId: 'partner-a\u0000' },
      /providerId contains the unprintable character U\+0000/,
    ],
    ['a providerId of 65 characters', { providerId: 'p'.repeat(65) }, /providerId longer than 64/],
    ['a swapId of 3,000 characters', { swapId: 's'.repeat(3000) }, /swapId is longer than 512/],
  ])(
    'an envelope with %s is dead-lettered with the reason; the partition goes on',
    async (label, envelope, reason) => {
      const id = `le-${label.replace(/\W+/g, '-')}`;
      const bad = { ...statusReported(id, 'PENDING'), ...envelope } as SwapEvent;
      await log.append([swapCreated(id), bad, swapCreated(`${id}-after`)]);
      await positionAtEnd();
      const dl = await projection.pool.query(
        `select reason, status from dead_letters order by failed_at desc, dead_letter_id desc limit 1`,
      );
      expect(dl.rows[0]).toMatchObject({ status: 'open', reason: expect.stringMatching(reason) });
      expect(await outcomes(id)).toEqual(['applied']);
      expect(await outcomes(`${id}-after`)).toEqual(['applied']);
    },
  );

  it('a dead letter retry that meets a registry answering 503 is tried again, then applied', async () => {
    // An envelope schema the live projector's registry will first call unknown: a variant with one more field.
    const base = envelopeSchema();
    const variant = {
      ...base,
      fields: [
        ...(base.fields as object[]),
        { name: 'variantNote', type: ['null', 'string'], default: null },
      ],
    };
    const subject = `${uniqueName('variant')}-value`;
    const registered = await fetch(`${stack.registryUrl}/subjects/${encodeURIComponent(subject)}/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(variant) }),
    });
    expect(registered.ok).toBe(true);
    const variantId = ((await registered.json()) as { id: number }).id;
    proxy.state.id = variantId;
    proxy.state.mode = 'unknown';

    const created = swapCreated('le-retry');
    const producer = testKafka('variant').producer({ createPartitioner: swapEventPartitioner });
    await producer.connect();
    await producer.send({
      topic: log.topic,
      acks: -1,
      messages: [
        {
          key: swapKey('partner-a', 'le-retry'),
          value: encodeEvent(avro.Type.forSchema(variant as avro.Schema), variantId, created),
        },
      ],
    });
    await producer.disconnect();
    await positionAtEnd();
    const dl = await projection.pool.query(
      `select dead_letter_id, aggregate_key, reason from dead_letters where aggregate_key = $1`,
      [swapKey('partner-a', 'le-retry')],
    );
    expect(dl.rows[0].reason).toMatch(new RegExp(`schema id ${variantId} is unknown`));

    // The operator retries while the registry fails: nothing may be journaled as a permanent rejection.
    proxy.state.mode = 'down';
    const asked = proxy.state.asked;
    const retry = deadLetterRetriedEvent(
      { deadLetterId: dl.rows[0].dead_letter_id, aggregateKey: dl.rows[0].aggregate_key },
      { by: 'ops-test', reason: 'schema registered' },
    );
    await log.append([retry]);
    const deadline = Date.now() + 20_000;
    while (proxy.state.asked < asked + 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(proxy.state.asked).toBeGreaterThanOrEqual(asked + 2); // asked again: the batch was retried
    const meanwhile = await projection.pool.query(
      'select outcome, reason from event_journal where event_id = $1',
      [retry.eventId],
    );
    expect(meanwhile.rows).toEqual([]);

    proxy.state.mode = 'pass';
    await positionAtEnd();
    const journal = await projection.pool.query(
      'select outcome, reason from event_journal where event_id = $1',
      [retry.eventId],
    );
    expect(journal.rows[0]).toMatchObject({ outcome: 'applied' });
    expect(await outcomes('le-retry')).toEqual(['applied', 'applied']); // the retry, then the SwapCreated
    expect((await projection.pool.query(`select 1 from swaps where swap_id = 'le-retry'`)).rowCount).toBe(1);
    const status = await projection.pool.query('select status from dead_letters where dead_letter_id = $1', [
      dl.rows[0].dead_letter_id,
    ]);
    expect(status.rows[0].status).toBe('retried');
  });

  it('a replay rebuilds the same state (EQUAL): the registry first calls the schema unknown, as live', async () => {
    await positionAtEnd();
    proxy.state.mode = 'unknown-once';
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: testKafka('log-edges-replay'),
      codec: new EventCodec(proxy.url, log.topic),
      topic: log.topic,
      liveSchema: projection.schema,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      expect(result.equal).toBe(true);
    } finally {
      await projection.pool.query(`drop schema if exists ${result.schema} cascade`);
    }
  });
});

describe('a rejected row the journal refuses does not fail the batch forever (real Postgres)', () => {
  const topic = 'unstorable-row-topic';
  let projection: { schema: string; pool: pg.Pool };

  beforeAll(async () => {
    projection = await freshProjectionAtStart('unstorable_row', topic);
  });
  afterAll(async () => {
    await projection?.pool.end();
  });

  it('an event that bypassed the codec with a U+0000 providerId is journaled without its payload; the next applies', async () => {
    const bad = { ...statusReported('ur-1', 'PENDING'), providerId: 'partner-a\u0000' } as SwapEvent;
    const next = swapCreated('ur-2');
    const at = (offset: bigint) => ({ topic, partition: 0, offset });
    const client = await projection.pool.connect();
    try {
      const result = await projectBatch(client, topic, 0, 0n, [
        { position: at(0n), event: bad },
        { position: at(1n), event: next },
      ]);
      expect(result.ok).toBe(true);
    } finally {
      client.release();
    }
    const j = await projection.pool.query(
      `select provider_id, outcome, reason, payload from event_journal order by "offset"`,
    );
    expect(j.rows.map((r) => r.outcome)).toEqual(['rejected', 'applied']);
    expect(j.rows[0]).toMatchObject({ provider_id: 'partner-a\ufffd', payload: {} });
    expect(j.rows[0].reason).toMatch(/its payload could not be journaled/);
  });
});

describe('a fold that throws is a fold error, not a refusal by the database (real Postgres)', () => {
  const topic = 'fold-error-topic';
  let projection: { schema: string; pool: pg.Pool };

  beforeAll(async () => {
    projection = await freshProjectionAtStart('fold_error', topic);
  });
  afterAll(async () => {
    await projection?.pool.end();
  });

  it('journals it as rejected with kind fold_error and its stack for the log; the next event applies', async () => {
    const created = swapCreated('fe-1');
    // A value the fold reads and no bound checks: reading it throws, as a bug of the fold would.
    const broken = statusReported('fe-1', 'PENDING');
    Object.defineProperty(broken.payload, 'status', {
      enumerable: false,
      get() {
        throw new TypeError('boom in the fold');
      },
    });
    const after = statusReported('fe-1', 'FINISHED', {
      amount: '0.25',
      payinTransactionId: 'in',
      payoutTransactionId: 'out',
    });
    const at = (offset: bigint) => ({ topic, partition: 0, offset });
    const client = await projection.pool.connect();
    try {
      const result = await projectBatch(client, topic, 0, 0n, [
        { position: at(0n), event: created },
        { position: at(1n), event: broken },
        { position: at(2n), event: after },
      ]);
      if (!result.ok) throw new Error('checkpoint moved');
      expect(result.refusedByDatabase).toEqual([
        expect.objectContaining({
          eventId: broken.eventId,
          kind: 'fold_error',
          stack: expect.stringContaining('boom in the fold'),
        }),
      ]);
    } finally {
      client.release();
    }
    const j = await projection.pool.query(
      `select outcome, reason from event_journal where swap_id = 'fe-1' order by "offset"`,
    );
    expect(j.rows.map((r) => r.outcome)).toEqual(['applied', 'rejected', 'applied']);
    expect(j.rows[1].reason).toMatch(
      /^the fold failed on the event \(a bug, not a refusal by the database\): TypeError: boom/,
    );
    expect(rejectionKind(j.rows[1].reason)).toBe('fold_error');
  });
});
