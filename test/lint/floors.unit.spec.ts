// The floors are held by lint (npm run lint runs dependency-cruiser with .dependency-cruiser.cjs): a small tree
// of its own, laid out like src/, shows that an upward or sideways import fails and a downward one passes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Lints a tree of `files` (path -> source) with the project's rules; the exit code and the report. */
function lint(files: Record<string, string>): { code: number; out: string } {
  const root = mkdtempSync(join(tmpdir(), 'floors-'));
  dirs.push(root);
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true },
    }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(
    join(REPO, 'node_modules/.bin/depcruise'),
    ['src', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err'],
    { cwd: root, encoding: 'utf8' },
  );
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

describe('floors (lint)', () => {
  it('a downward import passes: the projector reads the database and the swap rules', () => {
    const r = lint({
      'src/db/client.ts': 'export const pool = 1;\n',
      'src/swap/status.ts': 'export const open = 1;\n',
      'src/projector/batch.ts':
        "import { pool } from '../db/client.ts';\nimport { open } from '../swap/status.ts';\nexport const b = pool + open;\n",
    });
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  });

  it('an upward import fails: the database layer importing the projector', () => {
    const r = lint({
      'src/projector/batch.ts': 'export const b = 1;\n',
      'src/db/client.ts': "import { b } from '../projector/batch.ts';\nexport const pool = b;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/floor-2-looks-down: src\/db\/client\.ts → src\/projector\/batch\.ts/);
  });

  it('a sideways import fails: the reconciler importing ops (one floor)', () => {
    const r = lint({
      'src/ops/replay.ts': 'export const r = 1;\n',
      'src/reconciler/worker.ts': "import { r } from '../ops/replay.ts';\nexport const w = r;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('no-sideways-from-reconciler');
  });

  it("an edge never imports another edge's insides, even one floor below it: the gateway and the poller", () => {
    const r = lint({
      'src/poller/schedule.ts': 'export const due = 1;\n',
      'src/poller/poller.ts': "import { due } from './schedule.ts';\nexport const p = due;\n",
      'src/gateway/service.ts': "import { due } from '../poller/schedule.ts';\nexport const s = due;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('edges-stay-apart: src/gateway/service.ts → src/poller/schedule.ts');
    // Within its own folder an edge imports freely.
    expect(r.out).not.toContain('src/poller/poller.ts → src/poller/schedule.ts');
  });

  it("a part's process entry is imported by the CLI only, and the partner client stores nothing", () => {
    const r = lint({
      'src/projector/run.ts': 'export const start = 1;\n',
      'src/ops/replay.ts': "import { start } from '../projector/run.ts';\nexport const r = start;\n",
      'src/db/client.ts': 'export const pool = 1;\n',
      'src/partner/client.ts': "import { pool } from '../db/client.ts';\nexport const c = pool;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('entries-are-wired-by-the-cli: src/ops/replay.ts → src/projector/run.ts');
    expect(r.out).toContain('the-partner-client-stores-nothing: src/partner/client.ts → src/db/client.ts');
  });

  it('the named exceptions: the chart of accounts and the statuses from the schemas, the event types as types', () => {
    const r = lint({
      'src/ledger/accounts.ts': 'export const ACCOUNTS = [];\n',
      'src/swap/status.ts': 'export const STATUSES = [];\n',
      'src/db/schema/projection.ts':
        "import { ACCOUNTS } from '../../ledger/accounts.ts';\nexport const s = ACCOUNTS;\n",
      'src/db/schema/platform.ts':
        "import { STATUSES } from '../../swap/status.ts';\nexport const s = STATUSES;\n",
      'src/events/types.ts': 'export interface E { a: string }\n',
      'src/swap/report.ts': "import type { E } from '../events/types.ts';\nexport const f = (e: E) => e.a;\n",
    });
    expect(r.out).toContain('no dependency violations');
  });
});
