import type { Command } from '../command.ts';
import { healthCommand } from './health.ts';
import { payloadVerifyCommand } from './payload.ts';
import { simCommand } from './sim.ts';

/** Every CLI command, in the order `swap-ledger help` lists them. */
export const commands: readonly Command[] = [healthCommand, payloadVerifyCommand, simCommand];
