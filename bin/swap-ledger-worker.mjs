#!/usr/bin/env node
// One worker of `swap-ledger up` (e.g. `projector run`): loads only that command's modules, so the
// seven workers start in about half the time `bin/swap-ledger.mjs` would take to load every command.
import { register } from 'tsx/esm/api';

register();
const { runWorker } = await import('../src/cli/worker.ts');
process.exitCode = await runWorker(process.argv.slice(2));
