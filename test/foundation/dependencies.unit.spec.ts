import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// package.json's `dependencies` are what a production install (`npm ci --omit=dev`) gets: each must be loaded
// by the product at run time, and the README's Dependencies table says why each is there (issue 44).
const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const runtime = Object.keys(pkg.dependencies).sort();
const dev = Object.keys(pkg.devDependencies).sort();

/** The README's "## Dependencies" section, up to the next section. */
function section(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Dependencies\n');
  expect(start, 'README has a "## Dependencies" section').toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

const names = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The rows of the table whose header's first cell is `header`. */
function rows(header: string): string[] {
  const table = section()
    .split('\n\n')
    .map((block) => block.trim())
    .find((block) => block.startsWith(`| ${header} |`));
  expect(table, `a table headed "${header}"`).toBeDefined();
  return table!.split('\n').slice(2);
}

/** The package names in the first cell of each row (a row may name several), each row with a reason. */
function tableNames(header: string): string[] {
  return rows(header)
    .flatMap((row) => {
      const [, first, why] = row.split('|');
      expect(why?.trim(), `${row}: a reason`).toBeTruthy();
      return names(first!);
    })
    .sort();
}

/** The sources a production install runs: src/, bin/ and scripts/stack (`npm start` runs it through tsx). */
function productSources(): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? walk(join(dir, e.name))
        : /\.(ts|mjs|cjs|js)$/.test(e.name)
          ? [readFileSync(join(dir, e.name), 'utf8')]
          : [],
    );
  return ['src', 'bin', 'scripts/stack'].flatMap((d) => walk(join(root, d))).join('\n');
}

describe("the README's dependency tables", () => {
  it('name exactly the runtime dependencies of package.json, each once with a reason', () => {
    const table = tableNames('dependency');
    expect(new Set(table).size, 'a dependency named twice').toBe(table.length);
    expect(table).toEqual(runtime);
  });

  it('name exactly the development dependencies apart, each once with a reason', () => {
    const table = tableNames('dev dependency');
    expect(new Set(table).size, 'a dev dependency named twice').toBe(table.length);
    expect(table).toEqual(dev);
  });
});

describe('runtime dependencies', () => {
  it('are each loaded by src/, bin/ or scripts/stack (a package only tests or scripts use is a devDependency)', () => {
    const sources = productSources();
    const loaded = (d: string) => sources.includes(`'${d}'`) || sources.includes(`'${d}/`);
    expect(runtime.filter((d) => !loaded(d))).toEqual([]);
  });

  it('are not devDependencies too', () => {
    expect(runtime.filter((d) => dev.includes(d))).toEqual([]);
  });
});
