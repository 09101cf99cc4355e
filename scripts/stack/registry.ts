import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { registryHealth } from '../../src/ops/health.ts';
import { mvn } from './maven.ts';
import { APICURIO_VERSION, stackPaths, stackPorts } from './paths.ts';
import { REGISTRY_DATABASE, ensureDatabase, type PostgresTarget } from './postgres.ts';
import { markerArg, runningPid, startDetached, waitUntilReady, type ServiceProcess } from './process.ts';

export const CCOMPAT_PATH = '/apis/ccompat/v7';

/** `instance` other than the default names an extra registry on the same storage (tests use one). */
export function registryService(instance = 'registry'): ServiceProcess {
  const { registryDir } = stackPaths();
  return {
    name:
      instance === 'registry' ? `Apicurio Registry ${APICURIO_VERSION}` : `Apicurio Registry (${instance})`,
    marker: markerArg(instance),
    pidFile: join(registryDir, `${instance}.pid`),
    logFile: join(registryDir, `${instance}.log`),
  };
}

export function registryUrl(port = stackPorts().registry): string {
  return `http://127.0.0.1:${port}${CCOMPAT_PATH}`;
}

export async function registryAnswers(url: string): Promise<boolean> {
  return (await registryHealth(url, 2000)).healthy;
}

/** The distribution tarball from Maven Central, unpacked once into .stack (the tarball stays in ~/.m2). */
function distribution(registryDir: string): string {
  const home = join(registryDir, `apicurio-registry-${APICURIO_VERSION}`);
  const runner = join(home, `apicurio-registry-app-${APICURIO_VERSION}-runner.jar`);
  if (existsSync(runner)) return runner;
  const downloads = join(registryDir, 'download');
  mkdirSync(downloads, { recursive: true });
  mvn(
    [
      'dependency:copy',
      `-Dartifact=io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:tar.gz:all`,
      `-DoutputDirectory=${downloads}`,
    ],
    `Apicurio Registry ${APICURIO_VERSION}`,
  );
  const tarball = readdirSync(downloads).find((f) => f.endsWith('.tar.gz'));
  if (!tarball) throw new Error(`Apicurio Registry ${APICURIO_VERSION}: Maven copied no tarball`);
  mkdirSync(home, { recursive: true });
  const r = spawnSync('tar', ['xzf', join(downloads, tarball), '-C', home], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`unpacking ${tarball} failed: ${r.stderr}`);
  if (!existsSync(runner)) throw new Error(`${runner} missing after unpacking ${tarball}`);
  return runner;
}

function jdbc(serverUrl: string) {
  const u = new URL(serverUrl);
  return {
    url: `jdbc:postgresql://${u.hostname}:${u.port || '5432'}/${REGISTRY_DATABASE}`,
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password),
  };
}

export async function startRegistry(
  pgTarget: PostgresTarget,
  log: (line: string) => void,
  instance = 'registry',
  port = stackPorts().registry,
): Promise<string> {
  const svc = registryService(instance);
  const { registryDir } = stackPaths();
  mkdirSync(registryDir, { recursive: true });
  const url = registryUrl(port);
  if (runningPid(svc) !== undefined) {
    await waitUntilReady(svc, () => registryAnswers(url), 90_000);
    log(`registry already running at ${url}`);
    return url;
  }
  if (await registryAnswers(url)) {
    throw new Error(`something else already answers on ${url}; set STACK_REGISTRY_PORT to another port`);
  }
  const runner = distribution(registryDir);
  // Schemas live in Postgres so that ids survive a restart (the in-memory default would reuse them).
  await ensureDatabase(pgTarget.serverUrl, REGISTRY_DATABASE);
  const db = jdbc(pgTarget.serverUrl);
  startDetached(
    svc,
    'java',
    [
      markerArg(instance),
      '-Xms128m',
      '-Xmx512m',
      // A connection idle over a second is checked before use: after a Postgres restart the pool drops its
      // dead connections at once instead of answering 500 through each of them in turn.
      '-Dquarkus.datasource.postgresql.jdbc.foreground-validation-interval=1S',
      '-jar',
      runner,
    ],
    {
      cwd: registryDir,
      env: {
        QUARKUS_HTTP_HOST: '127.0.0.1',
        QUARKUS_HTTP_PORT: String(port),
        APICURIO_STORAGE_KIND: 'sql',
        APICURIO_STORAGE_SQL_KIND: 'postgresql',
        APICURIO_DATASOURCE_URL: db.url,
        APICURIO_DATASOURCE_USERNAME: db.user,
        APICURIO_DATASOURCE_PASSWORD: db.password,
        // Tests isolate by subject prefix and may clean up after themselves.
        APICURIO_REST_DELETION_ARTIFACT_ENABLED: 'true',
        APICURIO_REST_DELETION_ARTIFACT_VERSION_ENABLED: 'true',
        APICURIO_REST_DELETION_GROUP_ENABLED: 'true',
      },
    },
  );
  await waitUntilReady(svc, () => registryAnswers(url), 120_000);
  log(`Apicurio Registry ${APICURIO_VERSION} ready at ${url} (storage: Postgres ${REGISTRY_DATABASE})`);
  return url;
}
