import { describe, expect, it } from 'vitest';
import { ConsoleDb } from '../../src/console/db.ts';
import { connectClient, createPool } from '../../src/db/client.ts';
import type { Logger } from '../../src/observability/log.ts';
import { testStack } from '../support/context.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function terminate(pid: number): Promise<void> {
  const admin = createPool(testStack().databaseUrl, { max: 1 });
  try {
    const r = await admin.query<{ ok: boolean }>('select pg_terminate_backend($1) as ok', [pid]);
    expect(r.rows[0]!.ok).toBe(true);
  } finally {
    await admin.end();
  }
}

/**
 * A pool's idle connection that the server ends (a restart, an administrator's terminate, a database
 * dropped with FORCE) makes the pool emit 'error'. With no listener that error is thrown from the socket's
 * handler and ends the process: a worker would die of a connection it was not even using.
 */
describe('createPool (real Postgres)', () => {
  it('survives the server ending an idle connection, and opens another for the next query', async () => {
    const pool = createPool(testStack().databaseUrl, { max: 1, applicationName: 'idle-terminated' });
    try {
      const pid = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      expect(pool.idleCount).toBe(1);
      await terminate(pid);
      // The pool takes the ended connection out once its error arrives.
      for (let i = 0; i < 100 && pool.totalCount > 0; i++) await sleep(20);
      expect(pool.totalCount).toBe(0);
      const again = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
      expect(again.rows[0]!.pid).not.toBe(pid);
    } finally {
      await pool.end();
    }
  });

  it("the console's read-only pool too: the idle connection's end is logged at warn, the next query served", async () => {
    const warned: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warned.push(message) } as unknown as Logger;
    const db = new ConsoleDb(testStack().databaseUrl, 'console_idle', 'finance', logger);
    try {
      const [first] = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
      const pid = first!.pid;
      await terminate(pid);
      for (let i = 0; i < 100 && warned.length === 0; i++) await sleep(20);
      expect(warned).toEqual([
        'the server closed an idle database connection; the pool opens another when one is needed',
      ]);
      const [again] = await db.query<{ pid: number }>('select pg_backend_pid() as pid');
      expect(again!.pid).not.toBe(pid);
    } finally {
      await db.close();
    }
  });

  it('connectClient: a client of its own that the server ends between statements is logged, and its next statement fails; the process goes on', async () => {
    const warned: string[] = [];
    const logger = { warn: (_: unknown, message: string) => warned.push(message) } as unknown as Logger;
    const client = await connectClient(
      testStack().databaseUrl,
      { application_name: 'client-terminated' },
      () => logger,
    );
    try {
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await terminate(pid);
      for (let i = 0; i < 100 && warned.length === 0; i++) await sleep(20);
      // The server's notice of the end (57P01), then the socket's end: each said, neither thrown.
      expect(new Set(warned)).toEqual(
        new Set(['the server closed a database connection between statements; its next statement fails']),
      );
      await expect(client.query('select 1')).rejects.toThrow();
    } finally {
      await client.end().catch(() => {});
    }
  });

  it('connectClient: a server that cannot be reached is an error of the call, with nothing left open', async () => {
    await expect(
      connectClient('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMillis: 2000 }),
    ).rejects.toThrow(/ECONNREFUSED|connect/);
  });
});
