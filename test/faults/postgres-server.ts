import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

/**
 * Stops and starts the Postgres server a DATABASE_URL names, whichever it is (the Debian cluster, or one
 * a developer started with pg_ctl on another port): its data directory and the options it was started
 * with (postmaster.opts) are read from the server itself, and pg_ctl runs as the data directory's owner.
 */
export async function postgresServer(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const dataDir = (await client.query<{ data_directory: string }>('show data_directory')).rows[0]!
    .data_directory;
  await client.end();
  // e.g. /usr/lib/postgresql/15/bin/postgres "-D" "/var/lib/postgresql/15/main" "-c" "config_file=…"
  const opts = readFileSync(join(dataDir, 'postmaster.opts'), 'utf8').trim();
  const binary = opts.split(' ')[0]!;
  const args = [...opts.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const at = args.indexOf('-D');
  if (at >= 0) args.splice(at, 2);
  const pgCtl = join(dirname(binary), 'pg_ctl');
  const owner = statSync(dataDir).uid;
  const asOwner = (pgArgs: string[]) => {
    const [command, full] =
      process.getuid?.() === owner
        ? [pgCtl, pgArgs]
        : [
            'runuser',
            [
              '-u',
              execFileSync('id', ['-nu', String(owner)], { encoding: 'utf8' }).trim(),
              '--',
              pgCtl,
              ...pgArgs,
            ],
          ];
    return promisify(execFile)(command, full).then(() => undefined);
  };
  return {
    /** A fast shutdown: open sessions are ended ("the database system is shutting down" meanwhile). */
    stop: (): Promise<void> => asOwner(['-D', dataDir, '-m', 'fast', '-w', 'stop']),
    start: (): Promise<void> =>
      asOwner([
        '-D',
        dataDir,
        '-w',
        '-l',
        join(tmpdir(), `postgres-restarted-${process.pid}.log`),
        '-o',
        args.map((a) => `"${a}"`).join(' '),
        'start',
      ]),
  };
}
