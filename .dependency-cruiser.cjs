/**
 * The import rules of src/, checked in CI (`npm run lint`). The floors: pure domain rules (money, swap,
 * payload, the posting rules, the reconciliation checks, the fold) import no I/O adapter; nothing imports
 * the CLI (the top); the edge kit (src/http) imports no edge; nothing in src imports tests; no import circle.
 */
const PURE =
  '^src/(money|swap|payload)/|^src/ledger/(postings|accounts)[.]ts$|^src/reconciler/(checks|amount-checks|fee-checks|inputs|policy|types|exact)[.]ts$|^src/projector/(fold|swaps|requests|parking|admissible|verdict|state|reapply)[.]ts$';
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'pure-domain-imports-no-io',
      comment: 'domain rules stay pure: no database, Kafka, HTTP, logging or process code',
      severity: 'error',
      from: { path: PURE },
      to: {
        path: '^src/(db|events/(kafka|producer|codec|open|topics)|observability|cli|ops|http|gateway|ingest|poller|outbox|providers|catalog|partner)/|^node_modules/(pg|kafkajs|fastify|pino|@kafkajs)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^src/(?!cli/)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'edge-kit-knows-no-edge',
      comment: 'src/http is the shared Fastify kit of the webhook and the gateway: it imports neither',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(gateway|ingest|partner|poller|projector|reconciler|console|ops)/' },
    },
    { name: 'src-never-imports-tests', severity: 'error', from: { path: '^src/' }, to: { path: '^test/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
