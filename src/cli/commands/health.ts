import type { Command } from '../command.ts';

export const healthCommand: Command = {
  words: ['health'],
  usage: 'health [--json]',
  summary: 'report whether Kafka, the schema registry and Postgres answer',
  async run() {
    throw new Error('not implemented yet');
  },
};
