import { describe, expect, it } from 'vitest';
import { settledWithin } from '../../src/lifecycle/stop.ts';

describe('settledWithin: a stop step bounded in time', () => {
  it('is true for work that settles in time, whether it resolves or rejects, and for no work', async () => {
    expect(await settledWithin(Promise.resolve('left'), 50)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('already gone')), 50)).toBe(true);
    expect(await settledWithin(new Promise((r) => setTimeout(r, 5)), 200)).toBe(true);
    expect(await settledWithin(undefined, 0)).toBe(true);
  });

  it('is false once the time is up for work that never settles, and leaves no timer behind', async () => {
    const started = Date.now();
    expect(await settledWithin(new Promise(() => {}), 30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('a rejection that comes after the time is up is not unhandled', async () => {
    let fail!: (e: Error) => void;
    const late = new Promise((_, reject) => (fail = reject));
    expect(await settledWithin(late, 10)).toBe(false);
    fail(new Error('too late'));
    await new Promise((r) => setTimeout(r, 5));
  });
});

describe('the stop deadline of a process entry', () => {
  it('ends a process whose stop is stuck, that long after SIGTERM, with 0 and a line saying so', async () => {
    const { spawn } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const script = fileURLToPath(new URL('../fixtures/stuck-stop.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, '300'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    while (!out.includes('ready')) await new Promise((r) => setTimeout(r, 10));
    const asked = Date.now();
    child.kill('SIGTERM');
    expect(await exited, out).toBe(0);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(250);
    expect(out).toContain('stopping, and stuck');
    expect(out).toContain('still stopping 0.3 s after SIGTERM; exiting');
  }, 20_000);
});
