// The status poller (README, "Poller").
export { changesOf, pollReport, reportFingerprint, type PolledSwap } from './change.ts';
export {
  Poller,
  createPollerMetrics,
  postgresPollerStore,
  type PollerMetrics,
  type PollerOptions,
  type PollerStore,
  type TickReport,
} from './poller.ts';
export { startPoller, syncAllCatalogs, type PollerConfig, type RunningPoller } from './run.ts';
export { PollSchedule } from './schedule.ts';
export { confirmationCandidates, pollingSet, recordConfirmation, type ConfirmationOutcome } from './set.ts';
