import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every process the project starts (a CLI command, a worker, `up`) loads its module graph through tsx: a heavy
 * package imported at the top of a module every command loads is paid by all of them. These are the static
 * import graphs (what loads before any code runs; an `import()` inside a function is not followed, an
 * `import type` is erased) of the entry modules, held to what they use.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The specifiers a module imports statically, as loaded at run time (verbatimModuleSyntax: only `import type` and `export type` are erased). */
function staticImports(source: string): string[] {
  const out: string[] = [];
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'/gm))
    if (!m[2] && (m[1] === 'import' || /^\s*export\s+(\*|\{)/.test(m[0]))) out.push(m[3]!);
  return out;
}

const packageOf = (spec: string) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;

/** The packages reachable from `entry` by static imports through src/, each with the chain that reaches it. */
function staticPackages(entry: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        if (spec.endsWith('.ts')) walk(resolve(dirname(file), spec), [...chain, spec]);
        continue;
      }
      const name = packageOf(spec);
      if (!found.has(name)) found.set(name, [...chain, spec]);
    }
  };
  walk(resolve(root, entry), [entry]);
  return found;
}

function expectNotLoaded(entry: string, packages: string[]) {
  const found = staticPackages(entry);
  const loaded = packages.filter((p) => found.has(p)).map((p) => found.get(p)!.join(' -> '));
  expect(loaded, `${entry} loads these at start`).toEqual([]);
}

describe('staticImports', () => {
  it('follows value imports and re-exports, not type-only ones or dynamic imports', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      'import {',
      '  c,',
      '  type D,',
      "} from 'c-pkg';",
      "import e from 'e-pkg';",
      "import 'side-effect';",
      "export { f } from './f.ts';",
      "export type * from './g.ts';",
      "// import { h } from 'h-pkg';",
      "const i = await import('i-pkg');",
    ].join('\n');
    expect(staticImports(source)).toEqual(['./a.ts', 'c-pkg', 'e-pkg', 'side-effect', './f.ts']);
  });
});

describe('what a start loads before it runs', () => {
  it('every command and worker (the CLI, its option parsing, the configuration) loads no client library', () => {
    for (const entry of [
      'src/cli/main.ts',
      'src/cli/worker.ts',
      'src/cli/command.ts',
      'src/config/config.ts',
    ])
      expectNotLoaded(entry, [
        'drizzle-orm',
        'pg',
        '@opentelemetry/api',
        '@opentelemetry/sdk-node',
        'yaml',
        'avsc',
        '@kafkajs/confluent-schema-registry',
        '@platformatic/kafka',
        'kafkajs',
        'viem',
        'bitcoinjs-lib',
      ]);
  });

  it('`topics create` and `up` create topics without the codec and the producer', () => {
    for (const entry of ['src/cli/commands/topics.ts', 'src/events/open.ts', 'src/events/kafka.ts'])
      expectNotLoaded(entry, ['avsc', '@kafkajs/confluent-schema-registry', '@platformatic/kafka']);
  });

  it('a pool does not load drizzle', () => {
    expectNotLoaded('src/db/client.ts', ['drizzle-orm']);
  });

  it('`swap ...` loads no drizzle, and the payload checks only for `swap evidence`', () => {
    for (const entry of ['src/cli/commands/swap.ts', 'src/cli/commands/evidence.ts'])
      expectNotLoaded(entry, ['drizzle-orm', 'jose', 'protobufjs', 'secp256k1']);
  });

  it('`up` loads the demo chains (viem, bitcoinjs-lib) only when it runs the demo (not under --no-demo, nor for its help)', () => {
    expectNotLoaded('src/cli/commands/up.ts', ['viem', 'bitcoinjs-lib', 'jose']);
  });
});
