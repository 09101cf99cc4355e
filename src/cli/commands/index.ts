import type { Command } from '../command.ts';
import { healthCommand } from './health.ts';
import { payloadVerifyCommand } from './payload.ts';
import { dbMigrateCommand } from './db.ts';
import { simCommand } from './sim.ts';
import { topicsCreateCommand } from './topics.ts';
import { projectorRunCommand } from './projector.ts';
import { replayCommand, replayDropCommand, replayListCommand, replayPromoteCommand } from './replay.ts';
import { dlqDiscardCommand, dlqListCommand, dlqRetryCommand } from './dlq.ts';
import { eventsReapplyCommand } from './events.ts';
import { swapCorrectCommand, swapShowCommand } from './swap.ts';
import {
  caseAckCommand,
  caseApproveWriteOffCommand,
  caseDisputeCommand,
  caseListCommand,
  caseProposeWriteOffCommand,
  caseResolveCommand,
  caseShowCommand,
} from './case.ts';
import { evidenceVerifyCommand, swapEvidenceCommand } from './evidence.ts';
import { reconcileCommand, reconcilerRunCommand } from './reconcile.ts';
import { reportCommand } from './report.ts';
import {
  providerAddCommand,
  providerListCommand,
  providerLoadCommand,
  providerRevokeKeyCommand,
  providerRotateKeyCommand,
} from './provider.ts';
import { webhookServeCommand } from './webhook.ts';
import { gatewayServeCommand } from './gateway.ts';
import { pollerRunCommand } from './poller.ts';
import { chainWatchCommand } from './chain.ts';
import { catalogSyncCommand } from './catalog.ts';
import { outboxListCommand, outboxRelayCommand } from './outbox.ts';
import { partnerCertifyCommand } from './partner.ts';
import { upCommand } from './up.ts';
import { consoleServeCommand } from './console.ts';
import { demoChainCommand, demoRunCommand } from './demo.ts';
import { requestsResolveCommand, requestsStuckCommand } from './requests.ts';
import {
  periodCloseCommand,
  periodReopenCommand,
  periodVerifyCommand,
  statementImportCommand,
} from './monthend.ts';
import { invoiceIssueCommand, invoiceSettleCommand, invoiceShowCommand } from './invoice.ts';

/** Every CLI command, in the order `swap-ledger help` lists them. */
export const commands: readonly Command[] = [
  upCommand,
  healthCommand,
  dbMigrateCommand,
  topicsCreateCommand,
  projectorRunCommand,
  replayCommand,
  replayPromoteCommand,
  replayListCommand,
  replayDropCommand,
  dlqListCommand,
  dlqRetryCommand,
  dlqDiscardCommand,
  eventsReapplyCommand,
  swapShowCommand,
  swapCorrectCommand,
  swapEvidenceCommand,
  evidenceVerifyCommand,
  caseListCommand,
  caseShowCommand,
  caseAckCommand,
  caseDisputeCommand,
  caseResolveCommand,
  caseProposeWriteOffCommand,
  caseApproveWriteOffCommand,
  reconcileCommand,
  reconcilerRunCommand,
  reportCommand,
  payloadVerifyCommand,
  simCommand,
  partnerCertifyCommand,
  providerAddCommand,
  providerListCommand,
  providerRotateKeyCommand,
  providerRevokeKeyCommand,
  providerLoadCommand,
  webhookServeCommand,
  gatewayServeCommand,
  pollerRunCommand,
  chainWatchCommand,
  catalogSyncCommand,
  outboxRelayCommand,
  outboxListCommand,
  consoleServeCommand,
  demoRunCommand,
  demoChainCommand,
  requestsStuckCommand,
  requestsResolveCommand,
  statementImportCommand,
  periodCloseCommand,
  periodVerifyCommand,
  periodReopenCommand,
  invoiceIssueCommand,
  invoiceShowCommand,
  invoiceSettleCommand,
];
