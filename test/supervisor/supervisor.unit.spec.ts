import { describe, expect, it } from 'vitest';
import { RestartTracker, type RestartPolicy } from '../../src/supervisor/backoff.ts';
import { formatWorkerLine } from '../../src/supervisor/log-line.ts';
import { runWorker } from '../../src/cli/worker.ts';

const policy: RestartPolicy = {
  baseMs: 500,
  maxMs: 4000,
  healthyAfterMs: 30_000,
  maxRestarts: 5,
  windowMs: 60_000,
};

describe('restart backoff of a supervised worker', () => {
  it('doubles the wait after each quick failure, up to the cap', () => {
    const t = new RestartTracker({ ...policy, maxRestarts: 100 });
    const waits = [0, 1, 2, 3, 4, 5].map((i) => t.next(i * 100, 10));
    expect(waits).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
  });

  it('starts again from the base wait after a healthy run', () => {
    const t = new RestartTracker(policy);
    expect(t.next(0, 10)).toBe(500);
    expect(t.next(100, 10)).toBe(1000);
    expect(t.next(50_000, 40_000)).toBe(500);
  });

  it('gives up after too many restarts within the window, and forgives old ones', () => {
    const t = new RestartTracker(policy);
    for (let i = 0; i < 5; i++) expect(t.next(i, 10)).toBeDefined();
    expect(t.next(10, 10)).toBeUndefined();
    // A minute later the old restarts are out of the window.
    expect(t.next(70_000, 10)).toBeDefined();
  });
});

describe('the merged log line', () => {
  it('shortens a pino line to time, level, message and the remaining fields', () => {
    const line = JSON.stringify({
      level: 40,
      time: Date.parse('2026-11-23T10:27:14.000Z'),
      pid: 1,
      hostname: 'h',
      name: 'reconciler',
      msg: 'swap reconciled: MISMATCH',
      swapId: 's1',
    });
    expect(formatWorkerLine('reconciler', line)).toBe(
      'reconciler | 10:27:14 warn  swap reconciled: MISMATCH {"swapId":"s1"}',
    );
  });

  it("names a logged error by its type, message and code; its stack stays in the worker's JSON", () => {
    const e = Object.assign(new Error('the database system is shutting down'), { code: '57P01' });
    const line = JSON.stringify({ level: 50, time: 0, msg: 'outbox write failed', err: { ...pinoErr(e) } });
    expect(formatWorkerLine('gateway', line)).toBe(
      'gateway    | 00:00:00 error outbox write failed {"err":{"type":"Error","message":"the database system is shutting down","code":"57P01"}}',
    );
  });

  it('passes a line that is not JSON through under the prefix, padded to the widest name', () => {
    expect(formatWorkerLine('demo', 'plain text {', 10)).toBe('demo       | plain text {');
    expect(formatWorkerLine('demo', '{"not": "closed"', 6)).toBe('demo   | {"not": "closed"');
  });
});

describe('a worker process of up', () => {
  it('refuses a command that is not a worker with exit 2, loading nothing', async () => {
    const lines: string[] = [];
    const io = { stdout: (l: string) => lines.push(l), stderr: (l: string) => lines.push(l) };
    expect(await runWorker(['replay', 'promote'], io)).toBe(2);
    expect(lines.join('\n')).toContain('"replay promote" is not a worker command');
  });
});

/** What pino's err serializer writes for an error: type, message, stack and its own fields. */
function pinoErr(e: Error & { code?: string }) {
  return { type: e.name, message: e.message, stack: e.stack, code: e.code };
}
