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

  it("refuses case list's --age and --check unless they name an age bucket and a check, exit 2", async () => {
    for (const [flag, bad, said] of [
      ['--age', '2d', '--age "2d" is not an age bucket (0-1d, 1-7d, 7-30d, 30d+)'],
      ['--check', "x' or '1", `--check "x' or '1" is not a check name`],
      ['--check', '%', '--check "%" is not a check name'],
    ] as const) {
      const io = capture();
      expect(await main(['case', 'list', flag, bad], io)).toBe(2);
      expect(io.err.join('\n')).toContain(said);
    }
    for (const [args, said] of [
      [['--outcome', 'false_alarm', '--tx', '0x1'], '--tx goes with --outcome partner_paid'],
      [['--outcome', 'partner_paid', '--tx', '0x1', '--reference', 'r'], 'give one of --tx, --reference'],
    ] as const) {
      const io = capture();
      expect(await main(['case', 'resolve', 'p/s', ...args, '--by', 'a', '--reason', 'r'], io)).toBe(2);
      expect(io.err.join('\n')).toContain(said);
    }
  });

  it("refuses up's --ready-timeout unless it is whole seconds, with exit 2 before anything starts", async () => {
    for (const bad of ['0', '1.5', 'soon']) {
      const io = capture();
      expect(await main(['up', '--ready-timeout', bad], io)).toBe(2);
      expect(io.err.join('\n')).toContain(`--ready-timeout must be whole seconds from 1 (got "${bad}")`);
    }
  });

  it("refuses up's --replicas unless it is 1 to 8, with exit 2 before anything starts", async () => {
    for (const bad of ['0', '9', '2.5', 'two']) {
      const io = capture();
      expect(await main(['up', '--replicas', bad], io)).toBe(2);
      expect(io.err.join('\n')).toContain(`--replicas must be a whole number from 1 to 8 (got "${bad}")`);
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

describe('one error base at the boundary', () => {
  it('every refusal of what was given (usage, configuration, policy, operator input) exits 2', async () => {
    const { InputRefusedError } = await import('../../src/lifecycle/refusal.ts');
    const { ConfigError } = await import('../../src/config/config.ts');
    const { UsageError } = await import('../../src/cli/command.ts');
    const { ReconciliationPolicyError } = await import('../../src/reconciler/policy.ts');
    const { OperatorInputError } = await import('../../src/ops/operator-events.ts');
    const { SwapRefError } = await import('../../src/swap/ref.ts');
    const { ProvidersFileError } = await import('../../src/providers/file.ts');
    for (const e of [
      new ConfigError(['X: missing']),
      new UsageError('bad flag'),
      new ReconciliationPolicyError(['RECONCILE_TYPO: unknown reconciliation key']),
      new OperatorInputError('no such event'),
      new SwapRefError('empty'),
      new ProvidersFileError(['bad file']),
    ])
      expect(e).toBeInstanceOf(InputRefusedError);
  });
});

describe('reconciler run refuses its policy like any configuration', () => {
  it('a mistyped RECONCILE_ key exits 2 (up stops instead of restarting it), before any connection', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      KAFKA_BROKERS: '127.0.0.1:1',
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1',
      RECONCILE_FEE_FAVOR_TOLERANCE_RELATIVE: '0.1',
    });
    try {
      const io = capture();
      expect(await main(['reconciler', 'run'], io)).toBe(2);
      expect(io.err.join('\n')).toContain(
        'RECONCILE_FEE_FAVOR_TOLERANCE_RELATIVE: unknown reconciliation key',
      );
    } finally {
      process.env = saved;
    }
  });
});
