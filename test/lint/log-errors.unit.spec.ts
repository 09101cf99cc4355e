import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Each pino call (`x.warn({ ... }, msg)`) whose object logs an error otherwise than as `err: <the error>`. */
function misloggedErrors(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // Only a file that logs and names an error or a message can break the rule: the others are not parsed.
  if (!/\.(fatal|error|warn|info|debug|trace)\(/.test(text) || !/\berror\b|\.message\b|\berr: *\{/.test(text))
    return [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node) => {
    const fields =
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      LEVELS.has(n.expression.name.text) &&
      n.arguments[0] &&
      ts.isObjectLiteralExpression(n.arguments[0])
        ? n.arguments[0].properties
        : [];
    for (const p of fields) {
      if (!p.name || !ts.isIdentifier(p.name)) continue;
      const value = ts.isPropertyAssignment(p) ? p.initializer : undefined;
      const logged = value?.getText(sf) ?? p.name.text;
      if (p.name.text === 'error' || /\.message\b|^\{/.test(logged)) {
        const { line } = sf.getLineAndCharacterOfPosition(p.getStart(sf));
        found.push(`${relative(root, file)}:${line + 1}: ${p.name.text}: ${logged}`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

// pino's err serializer keeps the error's type, message and stack; a copied message loses them.
describe('logged errors', () => {
  it('go to pino as { err } (e.g. logger.warn({ err: e }, ...)), never as a message or an `error` field', () => {
    expect(sources(join(root, 'src')).flatMap(misloggedErrors)).toEqual([]);
  }, 30_000);
});
