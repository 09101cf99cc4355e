import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { APICURIO_VERSION, DEFAULT_PORTS, KAFKA_VERSION, repoRoot } from '../../scripts/stack/paths.ts';
import { REGISTRY_DATABASE } from '../../scripts/stack/postgres.ts';
import { CCOMPAT_PATH } from '../../scripts/stack/registry.ts';

interface Service {
  image: string;
  ports: string[];
  environment: Record<string, string>;
}

// docker-compose cannot run here; this keeps it consistent with the native stack it replaces.
describe('docker-compose.yml', () => {
  const text = readFileSync(`${repoRoot}/docker-compose.yml`, 'utf8');
  const compose = parse(text) as { services: Record<string, Service> };
  const { kafka, registry, postgres } = compose.services as Record<string, Service>;
  const defaults = DEFAULT_PORTS;

  /** The host port of a "127.0.0.1:${VAR:-default}:container" mapping, with its variable. */
  function hostPort(mapping: string) {
    const m = /^127\.0\.0\.1:\$\{(\w+):-(\d+)\}:(\d+)$/.exec(mapping);
    expect(m, `port mapping ${mapping} binds loopback with a configurable port`).not.toBeNull();
    return { variable: m![1], port: Number(m![2]), container: Number(m![3]) };
  }

  it('runs the versions the native stack runs', () => {
    expect(kafka!.image).toBe(`apache/kafka:${KAFKA_VERSION}`);
    expect(registry!.image).toBe(`apicurio/apicurio-registry:${APICURIO_VERSION}`);
    expect(postgres!.image).toBe('postgres:16');
  });

  it('publishes the native stack ports under the same variable names', () => {
    expect(hostPort(kafka!.ports[0]!)).toMatchObject({ variable: 'STACK_KAFKA_PORT', port: defaults.kafka });
    expect(hostPort(registry!.ports[0]!)).toMatchObject({
      variable: 'STACK_REGISTRY_PORT',
      port: defaults.registry,
    });
    expect(hostPort(postgres!.ports[0]!)).toMatchObject({ variable: 'STACK_POSTGRES_PORT', port: 5432 });
    expect(kafka!.environment.KAFKA_ADVERTISED_LISTENERS).toBe(
      'PLAINTEXT://127.0.0.1:${STACK_KAFKA_PORT:-19092}',
    );
  });

  it('keeps registry schemas in Postgres, like the native stack', () => {
    expect(registry!.environment).toMatchObject({
      APICURIO_STORAGE_KIND: 'sql',
      APICURIO_STORAGE_SQL_KIND: 'postgresql',
      APICURIO_DATASOURCE_URL: `jdbc:postgresql://postgres:5432/${REGISTRY_DATABASE}`,
    });
    expect(readFileSync(`${repoRoot}/scripts/stack/compose-init.sql`, 'utf8')).toContain(REGISTRY_DATABASE);
  });

  it('documents the same three connection variables the native stack writes', () => {
    expect(text).toContain(`KAFKA_BROKERS=127.0.0.1:${defaults.kafka}`);
    expect(text).toContain(`SCHEMA_REGISTRY_URL=http://127.0.0.1:${defaults.registry}${CCOMPAT_PATH}`);
    expect(text).toMatch(/DATABASE_URL=postgres:\/\/\S+@127\.0\.0\.1:5432\/swap_ledger/);
  });
});
