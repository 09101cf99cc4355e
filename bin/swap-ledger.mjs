#!/usr/bin/env node
// Runs the TypeScript sources through tsx so the CLI never drifts from a stale build.
import { register } from 'tsx/esm/api';

register();
// A closed pipe (`swap-ledger ... | head`) ends the output, not the process with a stack trace.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
