import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { readdirSync } from 'node:fs';
import { allCommands, commandsNamed } from '../../src/cli/commands/index.ts';
import type { CliIo } from '../../src/cli/command.ts';

function capture(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
}

const commands = await allCommands();

describe('swap-ledger <command> --help', () => {
  // No configuration at all: a command that tried to run instead of printing help would fail with exit 2.
  const env = { ...process.env };
  for (const k of ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'SWAP_LEDGER_CONFIG'])
    delete env[k];

  for (const command of commands) {
    for (const flag of ['--help', '-h']) {
      it(`${command.words.join(' ')} ${flag} prints its usage and exits 0`, async () => {
        const saved = process.env;
        process.env = env;
        const io = capture();
        try {
          expect(await main([...command.words, flag], io)).toBe(0);
        } finally {
          process.env = saved;
        }
        expect(io.err).toEqual([]);
        const text = io.out.join('\n');
        expect(text).toContain(`usage: swap-ledger ${command.usage}`);
        expect(text).toContain(command.summary);
      });
    }
  }

  it('answers help after other options too', async () => {
    const io = capture();
    expect(await main(['reconcile', '--swap', 'x', '--help'], io)).toBe(0);
    expect(io.out.join('\n')).toMatch(/^usage: swap-ledger reconcile /);
  });

  it('keeps exit 2 and a one-line message for an unknown option', async () => {
    const io = capture();
    expect(await main(['reconcile', '--frob'], io)).toBe(2);
    expect(io.err).toHaveLength(1);
    expect(io.err[0]).toMatch(/^swap-ledger reconcile: unknown option --frob; usage: swap-ledger reconcile /);
  });

  it('keeps exit 2 for a value option given no value, and for an argument a command takes none of', async () => {
    const io = capture();
    expect(await main(['projector', 'run', '--max-batch'], io)).toBe(2);
    expect(io.err[0]).toMatch(/--max-batch needs a value/);
    expect(await main(['reconciler', 'run', 'extra'], io)).toBe(2);
    expect(io.err[1]).toMatch(/unexpected argument "extra"/);
  });

  it('refuses a value on a flag', async () => {
    const io = capture();
    expect(await main(['health', '--json=yes'], io)).toBe(2);
    expect(io.err[0]).toMatch(/--json takes no value/);
  });
});

describe('parseOptions', () => {
  it('takes a value that starts with "-" (base64url signatures)', async () => {
    const { parseOptions } = await import('../../src/cli/command.ts');
    expect(parseOptions(['--sig', '-abc', 'p'], { values: ['sig'] })).toEqual({
      values: { sig: '-abc' },
      flags: {},
      positionals: ['p'],
    });
  });
});

describe('the command index', () => {
  it('reaches every command every module of src/cli/commands exports, once', async () => {
    const dir = new URL('../../src/cli/commands/', import.meta.url);
    const exported = new Set<unknown>();
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts') && n !== 'index.ts'))
      for (const v of Object.values(await import(new URL(f, dir).href)))
        if (typeof v === 'object' && v !== null && 'words' in v && 'run' in v) exported.add(v);
    expect(new Set(commands)).toEqual(exported);
    expect(commands.length).toBe(exported.size);
  });

  it('loads only the module of the first word: an unknown word loads none and says so', async () => {
    expect((await commandsNamed('case')).every((c) => c.words[0] === 'case')).toBe(true);
    expect(await commandsNamed('frobnicate')).toEqual([]);
  });
});
