import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { resolveSwapRef } from '../../ops/swap-ref.ts';
import { parseSwapRef } from '../../swap/ref.ts';
import { asUsage } from '../operator.ts';

export const swapEvidenceCommand: Command = {
  words: ['swap', 'evidence'],
  usage: 'swap evidence <provider>/<swapId> [--out <file.json>]',
  summary:
    "a swap's evidence pack: canonical JSON (RFC 8785) with its SHA-256, and with --out a printable <file>.html beside it",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['out', 'provider'] });
    if (positionals.length !== 1) throw new UsageError('name one swap: <provider>/<swapId>');
    const parsed = await asUsage(async () => parseSwapRef(positionals[0]!, values.provider));
    const config = loadConfig(process.env, ['DATABASE_URL']);
    // The pack's payload decoding and signature checks (protobufjs, jose, secp256k1) load for this command
    // only, not for every `swap ...` command that shares its first word.
    const [{ canonicalJson, renderEvidenceHtml }, { buildEvidencePack, EvidenceError }] = await Promise.all([
      import('../../cases/evidence.ts'),
      import('../../ops/evidence.ts'),
    ]);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let pack;
    try {
      const ref = await asUsage(() => resolveSwapRef(pool, parsed));
      pack = await buildEvidencePack(pool, ref);
    } catch (e) {
      if (!(e instanceof EvidenceError)) throw e;
      io.stderr(e.message);
      return 1;
    } finally {
      await pool.end();
    }
    const json = canonicalJson(pack);
    if (!values.out) {
      io.stdout(json);
      return 0;
    }
    const html = values.out.replace(/\.json$/i, '') + '.html';
    await writeFile(values.out, json);
    await writeFile(html, renderEvidenceHtml(pack));
    io.stdout(
      `evidence pack written to ${values.out} and ${html}; sha256 of its content ${pack.digest.value}`,
    );
    return 0;
  },
};

/** The pack's JSON in a file: the JSON itself, or the page that embeds it. */
function packText(text: string): string {
  const embedded = /<script type="application\/json" id="evidence-pack">([\s\S]*?)<\/script>/.exec(text);
  return embedded ? embedded[1]!.replace(/\\u003c/g, '<') : text;
}

export const evidenceVerifyCommand: Command = {
  words: ['evidence', 'verify'],
  usage: 'evidence verify <file>',
  summary:
    "re-checks an evidence pack offline (its digest, canonical form, the payload's signature with the key it carries)",
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length !== 1) throw new UsageError('name one evidence pack file');
    let text: string;
    try {
      text = await readFile(positionals[0]!, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read ${positionals[0]}: ${(e as Error).message}`);
    }
    const { verifyEvidence } = await import('../../cases/evidence.ts');
    const checks = await verifyEvidence(packText(text));
    for (const c of checks) io.stdout(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
    const ok = checks.every((c) => c.ok);
    (ok ? io.stdout : io.stderr)(ok ? 'evidence pack verified' : 'evidence pack REFUSED');
    return ok ? 0 : 1;
  },
};
