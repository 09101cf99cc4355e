import { stackDown, stackStatus, stackUp } from './stack.ts';

const usage = 'usage: stack up | status | down';

async function run(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      const endpoints = await stackUp();
      console.log('\nstack is up; these are written to .stack/stack.env:');
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
