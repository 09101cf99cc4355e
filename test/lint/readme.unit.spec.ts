import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
/** The first fenced block of a markdown page: the README's and the architecture's flow diagram. */
const firstFence = (text: string) => /^```\n([\s\S]*?)^```$/m.exec(text)?.[1];

// The README is the front door: a path it names that moved, or a worker missing from its flow, misleads.
describe('README.md', () => {
  it('names only src/ and test/ paths that exist (test/artifacts/ is made by the e2e run, git-ignored)', () => {
    const made = read('.gitignore').split('\n');
    const named = [...read('README.md').matchAll(/(?<![\w./-])((?:src|test)\/[\w./-]*[\w/])/g)].map(
      (m) => m[1]!,
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((p) => !existsSync(join(root, p)) && !made.includes(p))).toEqual([]);
  });

  it('draws the flow as docs/architecture.md does (every worker and path it shows)', () => {
    const flow = firstFence(read('docs/architecture.md'));
    expect(flow).toContain('chain watcher');
    expect(firstFence(read('README.md'))).toBe(flow);
  });
});
