// A judge thread of the reconciler (src/reconciler/judge-pool.ts). Plain JavaScript, so that it can load
// the TypeScript sources through tsx in its own thread, as bin/swap-ledger.mjs does.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { serveJudging } = await import('./judge-pool.ts');
serveJudging(parentPort, workerData);
