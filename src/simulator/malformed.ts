import { isDecimalText } from '../money/decimal.ts';
import type { PartnerOperation } from '../partner/types.ts';
import type { MalformedVariant } from './faults.ts';
import type { Reply } from './http.ts';

/** The malformed-body fault: a good answer made unreadable (not JSON, cut short, a field dropped or wrong). */

const DEFAULT_MALFORMED_FIELD: Readonly<Record<PartnerOperation, Partial<Record<MalformedVariant, string>>>> =
  {
    currencies: { 'drop-field': 'next_cursor', 'set-field': 'currencies.0.type' },
    pairs: {
      'drop-field': 'pairs.0.minSwapAmount',
      'number-for-decimal': 'pairs.0.minSwapAmount',
      'set-field': 'pairs.0.tradeMethod',
    },
    quote: { 'drop-field': 'amountTo', 'number-for-decimal': 'amountTo', 'set-field': 'expiry' },
    'swap-fixed': {
      'drop-field': 'providerSig',
      'number-for-decimal': 'providerFees',
      'set-field': 'createdAt',
    },
    'swap-float': {
      'drop-field': 'providerSig',
      'number-for-decimal': 'providerFees',
      'set-field': 'createdAt',
    },
    status: { 'drop-field': 'status', 'number-for-decimal': 'providerFees', 'set-field': 'amount' },
  };

const NUMBER_MARK = '\u0000number:';

export function malformed(
  reply: Reply,
  op: PartnerOperation,
  variant: MalformedVariant,
  field?: string,
  value?: unknown,
): Reply {
  const json = JSON.stringify(reply.body);
  switch (variant) {
    case 'not-json':
      return {
        status: 200,
        body: null,
        raw: { text: '<html><body>upstream error</body></html>', contentType: 'text/html' },
      };
    case 'truncated-json':
      return {
        status: 200,
        body: null,
        raw: { text: json.slice(0, Math.floor(json.length / 2)), contentType: 'application/json' },
      };
    case 'empty-body':
      return { status: 200, body: null, raw: { text: '', contentType: 'application/json' } };
  }
  const target = field ?? DEFAULT_MALFORMED_FIELD[op][variant];
  if (!target) throw new Error(`malformed-body ${variant} on ${op} needs a field`);
  const path = target.split('.');
  const body = structuredClone(reply.body) as Record<string, unknown>;
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], body) as
    Record<string, unknown> | undefined;
  const last = path[path.length - 1]!;
  if (parent && typeof parent === 'object') {
    if (variant === 'drop-field') delete parent[last];
    else if (variant === 'set-field') parent[last] = value ?? 'not-a-valid-value';
    else if (isDecimalText(parent[last])) parent[last] = NUMBER_MARK + parent[last];
  }
  // A bare number in the JSON text without going through JS number: the decimal digits are written as they are.
  const out = JSON.stringify(body).replace(/"\\u0000number:([^"]*)"/g, '$1');
  return { status: 200, body: null, raw: { text: out, contentType: 'application/json' } };
}
