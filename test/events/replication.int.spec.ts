import { describe, expect, it } from 'vitest';
import { testStack, uniqueName } from '../support/context.ts';
import { runCli } from '../support/cli.ts';

describe('topics create on the single broker of the default stack', () => {
  it('creates unreplicated topics (1 and 1) with a warning; a replication the cluster cannot give is refused', async () => {
    const stack = testStack();
    const events = uniqueName('repl-events');
    const env = { KAFKA_BROKERS: stack.kafkaBrokers, EVENTS_TOPIC: events, DLQ_TOPIC: `${events}.dlq` };
    const first = await runCli(['topics', 'create', '--partitions', '3'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      `created  ${events}  (3 partitions)  replication factor 1, min.insync.replicas 1`,
    );
    expect(first.stderr).toMatch(/warning: topics are not replicated \(replication factor 1/);
    const three = await runCli(['topics', 'create', '--replication-factor', '3'], {
      ...env,
      EVENTS_TOPIC: `${events}-3`,
    });
    expect(three.code).toBe(1);
    expect(three.stderr).toMatch(/a replication factor of 3 needs as many brokers; the cluster has 1/);
  });
});

describe('a writer on a topic never created', () => {
  it('is refused with what to run (the metadata retries were an unexplained failure)', async () => {
    const { assertReplicated } = await import('../../src/events/topics.ts');
    const { createKafka } = await import('../../src/events/kafka.ts');
    const admin = createKafka({
      brokers: testStack().kafkaBrokers.split(','),
      clientId: 'test-missing',
    }).admin();
    await admin.connect();
    try {
      await expect(assertReplicated(admin, uniqueName('never-created'))).rejects.toThrow(
        /does not exist: run swap-ledger topics create/,
      );
    } finally {
      await admin.disconnect();
    }
  });
});
