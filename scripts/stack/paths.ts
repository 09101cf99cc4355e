import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

/** Versions pinned by docs/architecture.md (Apicurio: see README "Stack" for why 3.0.9 instead of 3.1.7). */
export const KAFKA_VERSION = '3.9.1';
export const APICURIO_VERSION = '3.0.9';

export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
    throw new Error(`${name} must be a TCP port, got "${raw}"`);
  }
  return Number(raw);
}

/** Everything the native stack writes lives under one ignored folder of the project. */
export function stackPaths() {
  const dir = resolve(process.env.STACK_DIR ?? join(repoRoot, '.stack'));
  return {
    dir,
    kafkaDir: join(dir, 'kafka'),
    registryDir: join(dir, 'registry'),
    envFile: join(dir, 'stack.env'),
  };
}

/** Defaults chosen so the stack never collides with a developer's own 9092/8080/8081. */
export const DEFAULT_PORTS = { kafka: 19092, kafkaController: 19093, registry: 18081 } as const;

export function stackPorts() {
  return {
    kafka: port('STACK_KAFKA_PORT', DEFAULT_PORTS.kafka),
    kafkaController: port('STACK_KAFKA_CONTROLLER_PORT', DEFAULT_PORTS.kafkaController),
    registry: port('STACK_REGISTRY_PORT', DEFAULT_PORTS.registry),
  };
}
