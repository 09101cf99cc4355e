import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { swapCreated } from '../../src/testing/events.ts';
import { freshProjection, uniqueName } from '../support/context.ts';
import { freshEventLog, spawnProjector, waitForProjection } from '../support/event-log.ts';

/**
 * A projector asked to stop must stop, whatever its consumer group is doing: `up` kills a worker that has not
 * exited 15 s after its SIGTERM (seen in the console's e2e: a projector restarted after a SIGKILL and stopped
 * a moment after it joined never left its group). The moment here is the one `up` meets: the restart of a
 * killed member, SIGTERMed while its join still waits for the dead member's session to expire.
 */
describe('projector stop (real Kafka, registry, Postgres, processes)', () => {
  let log: Awaited<ReturnType<typeof freshEventLog>>;

  beforeAll(async () => {
    log = await freshEventLog(4);
    await log.append(Array.from({ length: 200 }, (_, i) => swapCreated(`stop-${i}`)));
  });
  afterAll(() => log?.close());

  it('a replacement of a SIGKILLed member, SIGTERMed while it joins the group, exits 0 within 15 s', async () => {
    const { schema, pool } = await freshProjection('stop_after_kill');
    const group = uniqueName('stop-after-kill');
    try {
      const first = spawnProjector({ topic: log.topic, schema, group, maxBatch: 20 });
      await waitForProjection(pool, log.topic);
      first.kill('SIGKILL');
      await first.exited;
      await log.append(Array.from({ length: 50 }, () => swapCreated(uniqueName('stop-more'))));

      const second = spawnProjector({ topic: log.topic, schema, group, maxBatch: 20 });
      const spawned = Date.now();
      while (second.output().length === 0 && Date.now() - spawned < 60_000)
        await new Promise((r) => setTimeout(r, 10));
      second.kill('SIGTERM');
      const asked = Date.now();
      const code = await Promise.race([
        second.exited,
        new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000)),
      ]);
      if (code === 'hung') second.kill('SIGKILL');
      expect(code, second.output().slice(-3000)).toBe(0);
      expect(Date.now() - asked, 'up would have killed it').toBeLessThan(15_000);
    } finally {
      await pool.end();
    }
  }, 120_000);
});
