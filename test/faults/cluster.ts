import { join } from 'node:path';
import { repoRoot } from '../../scripts/stack/paths.ts';

/** The three-broker stack of the fault tests: a folder and ports of its own (never the default stack's). */
export const CLUSTER_BROKERS = 3;

export function useClusterStack(): void {
  process.env.STACK_DIR ??= join(repoRoot, '.stack', `cluster${CLUSTER_BROKERS}`);
  process.env.STACK_KAFKA_PORT ??= '29092';
  process.env.STACK_REGISTRY_PORT ??= '28081';
}
