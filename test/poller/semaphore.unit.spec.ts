import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../src/poller/semaphore.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('Semaphore', () => {
  it('never runs more than its limit at once, and runs every task', async () => {
    const s = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 1 + (i % 4)));
          running--;
          return i;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(s.active).toBe(0);
  });

  it('starts waiting tasks in arrival order', async () => {
    const s = new Semaphore(1);
    const order: number[] = [];
    let release!: () => void;
    const first = s.run(() => new Promise<void>((r) => (release = r)));
    const rest = [1, 2, 3].map((n) => s.run(async () => void order.push(n)));
    await tick();
    expect(s.queued).toBe(3);
    expect(order).toEqual([]);
    release();
    await Promise.all([first, ...rest]);
    expect(order).toEqual([1, 2, 3]);
  });

  it('releases the slot of a task that throws', async () => {
    const s = new Semaphore(1);
    await expect(s.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(s.active).toBe(0);
    await expect(s.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('refuses a limit below one', () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
    expect(() => new Semaphore(1.5)).toThrow(RangeError);
  });
});
