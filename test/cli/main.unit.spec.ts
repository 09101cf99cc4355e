import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { parseOptions, UsageError, type CliIo } from '../../src/cli/command.ts';

function capture(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

describe('swap-ledger CLI', () => {
  it('lists the commands on help, exit 0', async () => {
    const io = capture();
    expect(await main(['help'], io)).toBe(0);
    expect(io.out.join('\n')).toMatch(/health/);
    expect(io.out.join('\n')).toMatch(/db migrate/);
  });

  it('refuses an unknown command with exit 2 and one line', async () => {
    const io = capture();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.err).toEqual(['swap-ledger: unknown command "frobnicate"; run "swap-ledger help"']);
  });

  it("refuses up's --ready-timeout unless it is whole seconds, with exit 2 before anything starts", async () => {
    for (const bad of ['0', '1.5', 'soon']) {
      const io = capture();
      expect(await main(['up', '--ready-timeout', bad], io)).toBe(2);
      expect(io.err.join('\n')).toContain(`--ready-timeout must be whole seconds from 1 (got "${bad}")`);
    }
  });

  it('reports every missing configuration key with exit 2', async () => {
    const io = capture();
    const saved = { ...process.env };
    delete process.env.DATABASE_URL;
    delete process.env.KAFKA_BROKERS;
    delete process.env.SCHEMA_REGISTRY_URL;
    delete process.env.SWAP_LEDGER_CONFIG;
    try {
      expect(await main(['health'], io)).toBe(2);
    } finally {
      process.env = saved;
    }
    expect(io.err.join('\n')).toMatch(
      /DATABASE_URL: missing[\s\S]*KAFKA_BROKERS: missing[\s\S]*SCHEMA_REGISTRY_URL: missing/,
    );
  });

  it('parses options and refuses unknown ones', () => {
    expect(parseOptions(['--a', '1', '--b=2', 'pos', '--f'], { values: ['a', 'b'], flags: ['f'] })).toEqual({
      values: { a: '1', b: '2' },
      flags: { f: true },
      positionals: ['pos'],
    });
    expect(() => parseOptions(['--nope'], { values: [] })).toThrow(UsageError);
    expect(() => parseOptions(['--a'], { values: ['a'] })).toThrow('--a needs a value');
  });
});
