// Public surface of the reconciler core: pure checks, the policy, and the bridge from events and
// the signed-payload inspection. The worker and the CLI build on these.
export {
  VERDICT_ORDER,
  worstVerdict,
  ReconciliationInputError,
  type Verdict,
  type ReconciledCheck,
  type ReconciliationResult,
  type ReconciliationInput,
  type SwapCreationFacts,
  type FinalReport,
  type FeeFigures,
  type ReconciliationRequest,
  type ReconciliationQuote,
  type AmountText,
  type StatusConflict,
} from './types.ts';
export { reconcileSwap, toSwapReconciled } from './checks.ts';
export {
  DEFAULT_RECONCILIATION_POLICY,
  EXACT_FEE,
  EXACT_BOTH_WAYS,
  FEE_KINDS,
  FEE_CHECK_KINDS,
  RETIRED_RECONCILIATION_POLICY_KEYS,
  retiredPolicyKeyProblems,
  RECONCILIATION_POLICY_KEYS,
  ReconciliationPolicyError,
  assertReconciliationPolicy,
  parseReconciliationPolicy,
  type FeeKind,
  type FeeCheckKind,
  type FeeDirection,
  type DirectionalTolerance,
  type FeeTolerance,
  type ReconciliationPolicy,
} from './policy.ts';
export { InexactArithmeticError } from './exact.ts';
export {
  creationFactsFromSwapCreated,
  finalReportFromSwapRow,
  inspectionInputFor,
  inspectAndReconcile,
  type SwapFinalColumns,
} from './facts.ts';
export { ReconcileError } from './loading.ts';
export type { RecordedVerdict } from './metrics.ts';
export { Reconciler, type ReconcilerOptions, type SwapReconciliation } from './worker.ts';
