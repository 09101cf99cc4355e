import { describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/client.ts';
import { testStack } from '../support/context.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
      const admin = createPool(testStack().databaseUrl, { max: 1 });
      try {
        const r = await admin.query<{ ok: boolean }>('select pg_terminate_backend($1) as ok', [pid]);
        expect(r.rows[0]!.ok).toBe(true);
      } finally {
        await admin.end();
      }
      // The pool takes the ended connection out once its error arrives.
      for (let i = 0; i < 100 && pool.totalCount > 0; i++) await sleep(20);
      expect(pool.totalCount).toBe(0);
      const again = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
      expect(again.rows[0]!.pid).not.toBe(pid);
    } finally {
      await pool.end();
    }
  });
});
