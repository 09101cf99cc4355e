import { describe, expect, it } from 'vitest';
import { testKafka, testStack, uniqueName } from '../support/context.ts';
import { runCli } from '../support/cli.ts';

describe('swap-ledger topics create', () => {
  it('creates the events topic (12 partitions, unlimited retention, not compacted) and the DLQ topic, idempotently', async () => {
    const stack = testStack();
    const events = uniqueName('topics-events');
    const env = { KAFKA_BROKERS: stack.kafkaBrokers, EVENTS_TOPIC: events, DLQ_TOPIC: `${events}.dlq` };
    const first = await runCli(['topics', 'create'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`created  ${events}  (12 partitions)`);
    expect(first.stdout).toContain(`created  ${events}.dlq  (1 partitions)`);

    const again = await runCli(['topics', 'create', '--partitions', '6'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`exists   ${events}  (12 partitions)`);
    expect(again.stderr).toContain('has 12 partitions, not 6; left as it is');

    const admin = testKafka('topics-check').admin();
    await admin.connect();
    try {
      const configs = await admin.describeConfigs({
        resources: [
          { type: 2, name: events, configNames: ['retention.ms', 'retention.bytes', 'cleanup.policy'] },
        ],
        includeSynonyms: false,
      });
      const entries = Object.fromEntries(
        configs.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]),
      );
      expect(entries).toEqual({ 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' });
    } finally {
      await admin.disconnect();
    }
  });
});
