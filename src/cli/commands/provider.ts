import { parseOptions, UsageError, type CliIo, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { migratePlatform } from '../../db/migrate.ts';
import { ProvidersFileError, readProvidersFile } from '../../providers/file.ts';
import { addProvider, loadProviders, revokeKey, rotateKey, type IssuedKey } from '../../providers/store.ts';
import { listProviders } from '../../providers/reads.ts';

/** The registry's database, migrated (idempotent) so a first `provider add` works on an empty one. */
async function withRegistry<T>(work: (pool: ReturnType<typeof createPool>) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env, ['DATABASE_URL']);
  await migratePlatform(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, { max: 2, applicationName: 'swap-ledger-provider' });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

function printKey(io: CliIo, issued: IssuedKey): void {
  io.stdout(
    `webhook API key ${issued.keyId} of ${issued.providerId}; shown once, it is not stored in clear:`,
  );
  io.stdout(`  ${issued.key}`);
  io.stdout(`the partner sends it as header x-api-key. To list it in the providers file (digest only):`);
  io.stdout(`  webhookKeys:\n    - keyId: ${issued.keyId}\n      sha256: "${issued.sha256}"`);
}

function onlyPositionals(positionals: string[], names: string[]): string[] {
  if (positionals.length !== names.length)
    throw new UsageError(
      positionals.length < names.length
        ? `missing ${names.slice(positionals.length).join(' and ')}`
        : `unexpected argument "${positionals[names.length]}"`,
    );
  return positionals;
}

export const providerAddCommand: Command = {
  words: ['provider', 'add'],
  usage: 'provider add <id> --base-url <url> [--name <display name>] [--disabled]',
  summary: 'create a provider (default mappings and limits) and print its first webhook API key once',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['base-url', 'name'],
      flags: ['disabled'],
    });
    const [id] = onlyPositionals(positionals, ['<id>']);
    if (!values['base-url']) throw new UsageError('--base-url is required');
    const issued = await withRegistry((pool) =>
      addProvider(pool, {
        id: id!,
        baseUrl: values['base-url']!,
        ...(values.name ? { displayName: values.name } : {}),
        enabled: !flags.disabled,
      }),
    );
    io.stdout(`provider ${id} created${flags.disabled ? ' (disabled)' : ''}`);
    printKey(io, issued);
    return 0;
  },
};

export const providerRotateKeyCommand: Command = {
  words: ['provider', 'rotate-key'],
  usage: 'provider rotate-key <id> [--revoke-old]',
  summary: 'add a webhook API key (printed once); older keys stay valid unless --revoke-old',
  async run(args, io) {
    const { flags, positionals } = parseOptions(args, { values: [], flags: ['revoke-old'] });
    const [id] = onlyPositionals(positionals, ['<id>']);
    const issued = await withRegistry((pool) =>
      rotateKey(pool, id!, { revokeOld: flags['revoke-old'] ?? false }),
    );
    printKey(io, issued);
    io.stdout(
      issued.revokedKeyIds.length > 0
        ? `revoked: ${issued.revokedKeyIds.join(', ')}`
        : 'older keys stay valid until revoked (provider rotate-key --revoke-old, or provider revoke-key)',
    );
    return 0;
  },
};

export const providerRevokeKeyCommand: Command = {
  words: ['provider', 'revoke-key'],
  usage: 'provider revoke-key <id> <keyId>',
  summary: 'revoke one webhook API key at once (running webhook servers drop it within PROVIDER_REFRESH_MS)',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    const [id, keyId] = onlyPositionals(positionals, ['<id>', '<keyId>']);
    const revoked = await withRegistry((pool) => revokeKey(pool, id!, keyId!));
    if (!revoked) {
      io.stderr(`no active key ${keyId} of provider ${id}`);
      return 1;
    }
    io.stdout(`key ${keyId} of ${id} revoked`);
    return 0;
  },
};

export const providerListCommand: Command = {
  words: ['provider', 'list'],
  usage: 'provider list [--json]',
  summary: 'show the providers in Postgres without secrets (header names only, key ids and dates only)',
  async run(args, io) {
    const { flags, positionals } = parseOptions(args, { values: [], flags: ['json'] });
    onlyPositionals(positionals, []);
    const providers = await withRegistry((pool) => listProviders(pool));
    if (flags.json) {
      io.stdout(JSON.stringify(providers, null, 2));
      return 0;
    }
    if (providers.length === 0) io.stdout('no providers');
    for (const p of providers) {
      const active = p.webhookKeys.filter((k) => k.revokedAt === null);
      io.stdout(`${p.id}  ${p.enabled ? 'enabled' : 'DISABLED'}  "${p.displayName}"  (${p.managedBy})`);
      io.stdout(`  base URL       ${p.baseUrl}`);
      io.stdout(`  auth headers   ${p.authHeaderNames.length ? p.authHeaderNames.join(', ') : '(none)'}`);
      io.stdout(
        `  webhook keys   ${active.length} active: ${active.map((k) => `${k.keyId} (${k.createdAt})`).join(', ') || '-'}` +
          `; ${p.webhookKeys.length - active.length} revoked`,
      );
      io.stdout(
        `  payload keys   ${p.payloadKeys.map((k) => `${k.keyId} ${k.curve} from ${k.validFrom}${k.validTo ? ` to ${k.validTo}` : ''}`).join('; ') || '-'}`,
      );
      io.stdout(`  currencies     ${p.currencies} mapped`);
      const custom = Object.entries(p.statusMap).filter(([partner, internal]) => partner !== internal);
      io.stdout(
        `  status map     ${Object.keys(p.statusMap).length} entries${custom.length ? `: ${custom.map(([a, b]) => `${a}->${b}`).join(', ')}` : ''}`,
      );
      io.stdout(`  final          ${p.finalStatuses.join(', ')}`);
      io.stdout(
        `  poll every     ${p.pollIntervalSeconds}s; webhook limit ${p.rateLimit.perSecond}/s, burst ${p.rateLimit.burst}`,
      );
    }
    return 0;
  },
};

export const providerLoadCommand: Command = {
  words: ['provider', 'load'],
  usage: 'provider load [--file <providers.yaml>] [--check]',
  summary:
    'check the providers file (PROVIDERS_FILE) and upsert it into Postgres; --check only checks it (no database)',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, { values: ['file'], flags: ['check'] });
    onlyPositionals(positionals, []);
    const file = values.file ?? loadConfig(process.env, []).PROVIDERS_FILE;
    if (!file) throw new UsageError('name the file with --file or PROVIDERS_FILE');
    try {
      const defs = readProvidersFile(file);
      for (const d of defs)
        if (d.literalHeaders.length > 0)
          io.stderr(
            `warning: ${d.id}: header ${d.literalHeaders.join(', ')} written in clear (allowLiteralSecrets); stored in the registry as written`,
          );
      if (flags.check) {
        io.stdout(`${file}: ${defs.length} provider(s), no problems: ${defs.map((d) => d.id).join(', ')}`);
        return 0;
      }
      const reports = await withRegistry((pool) => loadProviders(pool, defs));
      for (const r of reports)
        io.stdout(
          `${r.providerId}: loaded; ${r.keysAdded} key(s) added, ${r.keysRevoked} revoked, ${r.activeKeys} active`,
        );
      return 0;
    } catch (e) {
      if (!(e instanceof ProvidersFileError)) throw e;
      io.stderr(e.message);
      return 2;
    }
  },
};

export const providerCommands: readonly Command[] = [
  providerAddCommand,
  providerListCommand,
  providerRotateKeyCommand,
  providerRevokeKeyCommand,
  providerLoadCommand,
];
