/**
 * Duplicate keys in JSON text. JSON.parse keeps the last of two equal keys silently, so a body can carry
 * one value for a reader that keeps the first (a proxy, a log pipeline, another partner's library) and
 * another for us. The edges refuse such a body. Pure; run on text JSON.parse accepted already, so the
 * scan only has to tell keys from values: a string is a key when it follows `{` or `,` inside an object.
 */

/** Where the first repeated key is (`$`, `$.a`, `$.a[2]`) and which key it is, or undefined. */
export interface DuplicateKey {
  readonly key: string;
  readonly at: string;
}

interface Frame {
  readonly object: boolean;
  /** Keys seen in this object (objects only). */
  readonly keys: Set<string> | undefined;
  /** The current member's key (objects) or element index (arrays), for the path. */
  member: string | number;
}

export function duplicateJsonKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let afterOpenOrComma = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      const start = i;
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i === -1) return undefined; // not JSON: JSON.parse refuses it already
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (top?.object && afterOpenOrComma) {
        // Escapes name the same key in other words ("a" and "\u0061"): compare the decoded keys.
        const raw = text.slice(start + 1, i);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(start, i + 1)) as string) : raw;
        if (top.keys!.has(key)) return { key, at: pathOf(stack.slice(0, -1)) };
        top.keys!.add(key);
        top.member = key;
      }
      afterOpenOrComma = false;
    } else if (c === 0x7b /* { */) {
      stack.push({ object: true, keys: new Set(), member: '' });
      afterOpenOrComma = true;
    } else if (c === 0x5b /* [ */) {
      stack.push({ object: false, keys: undefined, member: 0 });
      afterOpenOrComma = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      afterOpenOrComma = false;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top && !top.object) top.member = (top.member as number) + 1;
      afterOpenOrComma = true;
    } else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) {
      afterOpenOrComma = false;
    }
  }
  return undefined;
}

/** `$` then each enclosing member: `.key` (as JSON text when it is not a plain name) or `[index]`. */
function pathOf(frames: readonly Frame[]): string {
  let path = '$';
  for (const f of frames) {
    if (!f.object) path += `[${f.member as number}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(f.member as string)) path += `.${f.member as string}`;
    else path += `[${JSON.stringify(f.member)}]`;
  }
  return path;
}

/** The refusal's wording, one for every edge. */
export function duplicateKeyMessage(d: DuplicateKey): string {
  const key = JSON.stringify(d.key.length > 64 ? `${d.key.slice(0, 64)}…` : d.key);
  return `duplicate key ${key} in the JSON body${d.at === '$' ? '' : ` at ${d.at}`}`;
}
