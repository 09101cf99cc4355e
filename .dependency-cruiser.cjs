/**
 * The import rules of src/, checked in CI (`npm run lint`). The floors (docs/architecture.md draws them): a
 * folder imports only from floors below it, never sideways or up; the process entries (each part's run.ts)
 * stand above every part, the CLI above them. Pure domain rules (money, swap, payload, the posting rules, the
 * reconciliation checks, the fold) import no I/O adapter; the partner client stores nothing; the edge kit
 * (src/http) imports no edge; nothing in src imports tests; no import circle.
 */

/** Bottom to top. A part's run.ts (a process entry, wired by the CLI alone) is not bound by its folder's floor. */
const FLOORS = [
  ['money', 'lifecycle', 'observability', 'work'],
  ['db'],
  ['swap', 'payload', 'config'],
  ['ledger', 'events', 'http', 'cases'],
  ['partner', 'monthend'],
  ['providers', 'catalog', 'outbox', 'projector', 'chain'],
  ['ingest', 'reconciler', 'ops', 'testing', 'chainwatch', 'poller'],
  ['gateway', 'simulator', 'certify', 'console'],
  ['demo'],
  ['supervisor'],
];
/** The process entries: each starts one worker, and only the CLI imports it. */
const ENTRY =
  '^src/(projector|reconciler|poller|gateway|console|demo|chainwatch)/run[.]ts$|^src/ingest/webhook/run[.]ts$';
const folders = (list) => `^src/(${list.join('|')})/`;
/** The outside-facing and scheduled edges (issue 44): each keeps to its own folder. */
const EDGES = 'ingest/webhook|gateway|poller|chainwatch|console';
/**
 * The one exception, named: the schemas' check constraints read the words they hold a column to, the chart of
 * accounts (src/ledger/accounts.ts) and the statuses and their classes (src/swap/status.ts), each a file that
 * imports nothing, so the schema and the rules share one list, never a copy.
 */
const SCHEMA_WORDS = '^src/ledger/accounts[.]ts$|^src/swap/status[.]ts$';
/**
 * The event catalog's TypeScript declarations (src/events/types.ts, no code) may be read as types from any
 * floor: the swap's rules and the ledger describe what they fold by them, and a type import carries nothing.
 */
const EVENT_TYPES = '^src/events/types[.]ts$';
const floorRules = FLOORS.map((floor, i) => ({
  name: `floor-${i + 1}-looks-down`,
  comment: `${floor.join(', ')} import only from the floors below them (${FLOORS.slice(0, i).flat().join(', ') || 'none'})`,
  severity: 'error',
  from: { path: folders(floor), pathNot: ENTRY },
  to: {
    path: `${folders(FLOORS.slice(i).flat())}|^src/cli/|${ENTRY}`,
    pathNot: `${SCHEMA_WORDS}|${floor.map((f) => `^src/${f}/`).join('|')}`,
  },
}));
/** A rule that forbids src/events/ still lets its types be imported as types (EVENT_TYPES). */
const typesOnly = (rule) =>
  new RegExp(rule.to.path).test('src/events/types.ts')
    ? [
        { ...rule, to: { ...rule.to, pathNot: [rule.to.pathNot, EVENT_TYPES].filter(Boolean).join('|') } },
        {
          ...rule,
          name: `${rule.name}-types`,
          from: { ...rule.from, pathNot: [rule.from.pathNot, '^src/events/'].filter(Boolean).join('|') },
          to: { path: EVENT_TYPES, dependencyTypesNot: ['type-only'] },
        },
      ]
    : [rule];
// A folder may import itself; sideways within a floor is refused by the rule above (the floor's other folders).
for (const [i, floor] of FLOORS.entries())
  for (const f of floor)
    floorRules.push({
      name: `floor-${i + 1}-no-sideways-from-${f}`,
      severity: 'error',
      from: { path: `^src/${f}/`, pathNot: ENTRY },
      to: { path: folders(floor.filter((g) => g !== f)), pathNot: SCHEMA_WORDS },
    });
const PURE =
  '^src/(money|swap|payload|cases)/|^src/ledger/(postings|accounts|periods)[.]ts$|^src/monthend/|^src/reconciler/(checks|amount-checks|fee-checks|inputs|policy|types|exact|chain-checks)[.]ts$|^src/projector/(fold|swaps|requests|parking|admissible|decision|state|reapply|chain|monthend|cases)[.]ts$';
module.exports = {
  forbidden: [
    ...floorRules.flatMap(typesOnly),
    {
      name: 'entries-are-wired-by-the-cli',
      comment: "a part's run.ts starts a process: only the CLI imports it",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: ENTRY, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'the-partner-client-stores-nothing',
      comment: 'src/partner talks to partners: no database, no Kafka producer, no provider registry',
      severity: 'error',
      from: { path: '^src/partner/' },
      to: {
        path: '^src/(db|providers|projector|outbox)/|^src/events/(kafka|producer|produce-rules|open|topics)[.]ts$|^node_modules/(pg|kafkajs|@platformatic/kafka)/',
      },
    },
    {
      name: 'edges-stay-apart',
      comment:
        "an edge (the webhook, the gateway, the poller, the chain watcher, the console) never imports another's insides: what two share lives on a floor below both",
      severity: 'error',
      from: { path: `^src/(${EDGES})/` },
      to: { path: `^src/(${EDGES})/`, pathNot: '^src/$1/' },
    },
    { name: 'no-circular', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'pure-domain-imports-no-io',
      comment: 'domain rules stay pure: no database, Kafka, HTTP, logging or process code',
      severity: 'error',
      from: { path: PURE },
      to: {
        path: '^src/(db|events/(kafka|producer|produce-rules|codec|open|topics)|observability|cli|ops|http|gateway|ingest|poller|outbox|providers|catalog|partner)/|^node_modules/(pg|kafkajs|@platformatic/kafka|fastify|pino|@kafkajs)/',
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
