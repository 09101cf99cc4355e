// A worker thread folding one part of a rebuild (src/projector/rebuild-part.ts). Plain JavaScript, so that
// it can load the TypeScript sources through tsx in its own thread, as bin/swap-ledger.mjs does.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { foldRebuildPartData } = await import('./rebuild-part.ts');
try {
  await foldRebuildPartData(workerData, (events) => parentPort.postMessage({ kind: 'batch', events }));
  parentPort.postMessage({ kind: 'done' });
} catch (e) {
  parentPort.postMessage({ kind: 'failed', message: e?.message ?? String(e), stack: e?.stack });
}
