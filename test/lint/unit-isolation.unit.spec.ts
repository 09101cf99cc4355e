import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MOCKING_UNIT_FILES } from '../support/mocking.ts';

const root = join(import.meta.dirname, '..', '..');

function unitFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? unitFiles(join(dir, e.name))
      : e.name.endsWith('.unit.spec.ts')
        ? [relative(root, join(dir, e.name))]
        : [],
  );
}

describe('the unit project shares one module graph', () => {
  it('so every unit file that replaces a module (vi.mock) is listed to run isolated, and only those', () => {
    const mocking = unitFiles(join(root, 'test')).filter((f) =>
      /\bvi\.(mock|doMock)\(/.test(readFileSync(join(root, f), 'utf8').replace(/\/\/.*$/gm, '')),
    );
    expect(mocking.sort()).toEqual([...MOCKING_UNIT_FILES].sort());
  });
});
