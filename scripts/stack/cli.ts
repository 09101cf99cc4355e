import { join } from 'node:path';
import { repoRoot } from './paths.ts';
import { stackDown, stackStatus, stackUp } from './stack.ts';

const usage = 'usage: stack up | status | down [--brokers <n>]';

/**
 * `--brokers N` (N > 1): a KRaft cluster of N nodes on loopback with its own registry, in a folder and on
 * ports of its own (.stack/cluster<N>, Kafka 29092 + 2 a node, registry 28081; STACK_DIR, STACK_KAFKA_PORT,
 * STACK_REGISTRY_PORT override), so it runs beside the default single broker (19092, 18081) and never
 * touches it. Its connection variables land in <folder>/stack.env.
 */
function brokersOption(args: string[]): number {
  const i = args.indexOf('--brokers');
  if (i < 0) return 1;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error('--brokers must be a whole number 1-9');
  if (n > 1) {
    process.env.STACK_DIR ??= join(repoRoot, '.stack', `cluster${n}`);
    process.env.STACK_KAFKA_PORT ??= '29092';
    process.env.STACK_REGISTRY_PORT ??= '28081';
  }
  return n;
}

async function run(command: string | undefined): Promise<number> {
  const brokers = brokersOption(process.argv.slice(3));
  switch (command) {
    case 'up': {
      const endpoints = await stackUp(console.log, { brokers });
      console.log(`\nstack is up; these are written to ${process.env.STACK_DIR ?? '.stack'}/stack.env:`);
      for (const [k, v] of Object.entries(endpoints)) console.log(`  ${k}=${v}`);
      return 0;
    }
    case 'status': {
      const components = await stackStatus();
      for (const c of components)
        console.log(`${c.healthy ? 'healthy  ' : 'DOWN     '} ${c.name.padEnd(26)} ${c.detail}`);
      return components.every((c) => c.healthy) ? 0 : 1;
    }
    case 'down':
      await stackDown();
      return 0;
    default:
      console.error(usage);
      return 2;
  }
}

run(process.argv[2]).then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`stack ${process.argv[2]}: ${e.message}`);
    process.exit(1);
  },
);
