import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/events', import.meta.url));
const NAMESPACE = 'swapledger.events';

type AvroNode = unknown;

function loadDefinitions(dir: string): Map<string, Record<string, unknown>> {
  const defs = new Map<string, Record<string, unknown>>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.avsc'))) {
    const def = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    defs.set(def.name as string, def);
  }
  return defs;
}

/**
 * The envelope schema with every named record inlined at its first use, as one self-contained Avro
 * schema (what the registry stores under `<topic>-value`). Each record lives in its own .avsc file.
 */
export function envelopeSchema(dir = SCHEMA_DIR): Record<string, unknown> {
  const defs = loadDefinitions(dir);
  const defined = new Set<string>();
  const resolve = (node: AvroNode): AvroNode => {
    if (typeof node === 'string') {
      const short = node.startsWith(`${NAMESPACE}.`) ? node.slice(NAMESPACE.length + 1) : node;
      const def = defs.get(short);
      if (!def) return node; // a primitive, or an enum/record defined inline earlier
      if (defined.has(short)) return `${NAMESPACE}.${short}`;
      defined.add(short);
      return resolve(def);
    }
    if (Array.isArray(node)) return node.map(resolve);
    if (node && typeof node === 'object') {
      const obj = node as Record<string, unknown>;
      if (obj.type === 'record') {
        defined.add(obj.name as string);
        return {
          ...obj,
          fields: (obj.fields as Record<string, unknown>[]).map((f) => ({ ...f, type: resolve(f.type) })),
        };
      }
      if (obj.type === 'array') return { ...obj, items: resolve(obj.items) };
      if (obj.type === 'map') return { ...obj, values: resolve(obj.values) };
      return obj;
    }
    return node;
  };
  const root = defs.get('SwapEvent');
  if (!root) throw new Error(`SwapEvent.avsc missing in ${dir}`);
  return resolve(root) as Record<string, unknown>;
}

export const PAYLOAD_NAMESPACE = NAMESPACE;
