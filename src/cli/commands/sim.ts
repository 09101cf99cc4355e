import { readFileSync } from 'node:fs';
import { parseOptions, UsageError, type CliIo, type Command } from '../command.ts';
import {
  SIMULATOR_CURVES,
  startPartnerSimulator,
  type PartnerSimulator,
  type PartnerSimulatorOptions,
  type SimulatorCurve,
} from '../../simulator/index.ts';

const USAGE =
  'sim [--port N] [--host 127.0.0.1] [--curve secp256k1|secp256r1] [--key-file PEM] [--provider ID] ' +
  '[--webhook-url URL --webhook-key KEY] [--progress manual|poll|MS] [--random] [--seed N] [--page-size N] ' +
  '[--signature-field signature|payload_signature|both] [--header "name: value"]';

/** Parses the command line into simulator options; exported for tests. */
export function simulatorOptionsFromArgs(
  args: string[],
  log?: (line: string) => void,
): PartnerSimulatorOptions {
  const { values, flags, positionals } = parseOptions(args, {
    values: [
      'port',
      'host',
      'curve',
      'key-file',
      'provider',
      'webhook-url',
      'webhook-key',
      'progress',
      'seed',
      'page-size',
      'signature-field',
      'header',
    ],
    flags: ['random', 'quiet'],
  });
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const int = (name: string, v: string | undefined, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number.parseInt(v, 10) < min || Number.parseInt(v, 10) > max) {
      throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
    }
    return Number.parseInt(v, 10);
  };
  const curve = values.curve;
  if (curve !== undefined && !(SIMULATOR_CURVES as readonly string[]).includes(curve)) {
    throw new UsageError(`--curve must be one of ${SIMULATOR_CURVES.join(', ')}`);
  }
  if ((values['webhook-url'] === undefined) !== (values['webhook-key'] === undefined)) {
    throw new UsageError('--webhook-url and --webhook-key go together');
  }
  if (values['webhook-url'] !== undefined) {
    try {
      new URL(values['webhook-url']);
    } catch {
      throw new UsageError('--webhook-url must be a URL');
    }
  }
  const progress = values.progress ?? 'manual';
  let advanceOn: 'manual' | 'poll' | { everyMs: number };
  if (progress === 'manual' || progress === 'poll') advanceOn = progress;
  else advanceOn = { everyMs: int('progress', progress, 10, 86_400_000)! };
  const sigField = values['signature-field'];
  if (sigField !== undefined && !['signature', 'payload_signature', 'both'].includes(sigField)) {
    throw new UsageError('--signature-field must be signature, payload_signature or both');
  }
  let requiredHeaders: Record<string, string> | undefined;
  if (values.header !== undefined) {
    const m = /^([^:\s]+)\s*:\s*(.*)$/.exec(values.header);
    if (!m) throw new UsageError('--header must look like "name: value"');
    requiredHeaders = { [m[1]!.toLowerCase()]: m[2]! };
  }
  const seed = int('seed', values.seed, 0, 2 ** 31 - 1);
  const pageSize = int('page-size', values['page-size'], 1, 10_000);
  return {
    host: values.host ?? '127.0.0.1',
    port: int('port', values.port, 0, 65_535) ?? 0,
    ...(curve ? { curve: curve as SimulatorCurve } : {}),
    ...(values['key-file'] ? { privateKeyPem: readFileSync(values['key-file'], 'utf8') } : {}),
    ...(values.provider ? { providerId: values.provider } : {}),
    ...(values['webhook-url']
      ? { webhook: { url: values['webhook-url'], apiKey: values['webhook-key']! } }
      : {}),
    progression: {
      advanceOn,
      ...(flags.random ? { random: true } : {}),
      ...(seed !== undefined ? { seed } : {}),
    },
    ...(pageSize !== undefined ? { defaultPageSize: pageSize } : {}),
    ...(sigField ? { signatureField: sigField as 'signature' | 'payload_signature' | 'both' } : {}),
    ...(requiredHeaders ? { requiredHeaders } : {}),
    ...(flags.quiet || !log ? {} : { log }),
  };
}

/** Starts the simulator, prints how to reach it, and serves until `until` resolves. */
export async function runSimulator(
  args: string[],
  io: CliIo,
  until: (sim: PartnerSimulator) => Promise<void>,
): Promise<number> {
  const sim = await startPartnerSimulator(simulatorOptionsFromArgs(args, (line) => io.stdout(line)));
  io.stdout(`partner simulator listening on ${sim.url} (provider ${sim.providerId})`);
  io.stdout(`signing key ${sim.publicKey.curve} (${sim.publicKey.alg}) public ${sim.publicKey.hex}`);
  try {
    await until(sim);
  } finally {
    await sim.close();
  }
  return 0;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export const simCommand: Command = {
  words: ['sim'],
  usage: USAGE,
  summary: 'run a partner simulator of interface v2 (127.0.0.1 by default) until Ctrl-C',
  run: (args, io) => runSimulator(args, io, untilSignal),
};
