#!/usr/bin/env node
// Runs the TypeScript sources through tsx so the CLI never drifts from a stale build.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
