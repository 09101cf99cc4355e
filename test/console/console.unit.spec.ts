import { cleanCaseFilters } from '../../src/console/pages/cases.ts';
import { caseAgeBucketSql } from '../../src/ledger/aging.ts';
import { describe, expect, it } from 'vitest';
import { ConsoleAuth, cookieValue, csrfMatches } from '../../src/console/auth.ts';
import { html, raw, swapHref } from '../../src/console/html.ts';
import { parseInstant } from '../../src/console/pages/books.ts';
import { mismatchesCsv, type MismatchRow } from '../../src/console/pages/reconciliation.ts';
import { cleanFilters, STATUSES, VERDICTS } from '../../src/console/pages/swaps.ts';
import { withoutCredentials } from '../../src/console/pages/operations.ts';
import { checkCells } from '../../src/console/pages/swap.ts';
import { CREATED_STATUS, INTERNAL_STATUSES } from '../../src/swap/status.ts';
import { barChart } from '../../src/console/svg.ts';
import { generateApiKey } from '../../src/providers/api-keys.ts';

describe('console HTML', () => {
  it('escapes every interpolated value, but not Html built by the templates', () => {
    const partner = '<script>alert("x")</script>';
    expect(html`<td>${partner}</td>`.text).toBe('<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>');
    expect(html`<p>${html`<b>${'a&b'}</b>`}${[raw('<i>'), "'"]}</p>`.text).toBe(
      '<p><b>a&amp;b</b><i>&#39;</p>',
    );
    expect(html`${null}${undefined}${false}${0}`.text).toBe('0');
  });

  it('links a swap by provider and swapId, each part encoded', () => {
    expect(swapHref('p-1', 'a/b?c')).toBe('/swaps/p-1/a%2Fb%3Fc');
  });
});

describe('console inputs', () => {
  it('keeps only the filters the console offers', () => {
    expect(
      cleanFilters({
        status: 'FINISHED',
        verdict: 'drop table',
        pair: 'BTC-ETH',
        age: '24h',
        q: ' p/s ',
        partner: '',
      }),
    ).toEqual({ status: 'FINISHED', pair: 'BTC-ETH', age: '24h', q: 'p/s' });
    expect(cleanFilters({ pair: "BTC-ETH' or 1=1", age: '1y', status: ['FINISHED'] })).toEqual({});
  });

  it('offers only the statuses a swap can have: CREATED and the internal ones', () => {
    expect(STATUSES).toEqual(['CREATED', 'PENDING', 'ON_HOLD', 'UNKNOWN', 'EXPIRED', 'FINISHED', 'REFUNDED']);
    expect(new Set(STATUSES)).toEqual(new Set([CREATED_STATUS, ...INTERNAL_STATUSES]));
    expect(cleanFilters({ status: 'CREATED' })).toEqual({ status: 'CREATED' });
    expect(cleanFilters({ status: 'PROCESSING' })).toEqual({});
  });

  it('the verdict filter knows NOT_APPLICABLE checks', () => {
    expect(VERDICTS).toContain('NOT_APPLICABLE');
    expect(cleanFilters({ verdict: 'NOT_APPLICABLE' })).toEqual({ verdict: 'NOT_APPLICABLE' });
  });

  it('reads a books time as UTC, or with its zone, and refuses anything else', () => {
    expect(parseInstant('2026-11-01T12:30')).toBe('2026-11-01T12:30:00.000Z');
    expect(parseInstant('2026-11-01')).toBe('2026-11-01T00:00:00.000Z');
    expect(parseInstant('2026-11-01T12:30:05+02:00')).toBe('2026-11-01T10:30:05.000Z');
    for (const bad of ['yesterday', '2026-13-45T99:99', "2026-11-01'; drop", '', undefined, 5])
      expect(parseInstant(bad)).toBeUndefined();
  });
});

describe('mismatches CSV', () => {
  const row: MismatchRow = {
    provider_id: 'p',
    swap_id: 's1',
    status: 'FINISHED',
    reconciled_at: '2026-11-23T10:27:14.000Z',
    check_name: 'amount.to_wallet',
    check_verdict: 'MISMATCH',
    expected: '0.148875',
    actual: '0.0746875',
    delta: '-0.0741875',
    tolerance: '0.0029775',
    detail: 'short, "more" than\nallowed',
  };

  it('writes one quoted RFC 4180 row per failing check; a negative figure is neutralised like any "-" cell', () => {
    const csv = mismatchesCsv([row]);
    expect(csv).toBe(
      'provider_id,swap_id,status,reconciled_at,check_name,check_verdict,expected,actual,delta,tolerance,detail\r\n' +
        "p,s1,FINISHED,2026-11-23T10:27:14.000Z,amount.to_wallet,MISMATCH,0.148875,0.0746875,'-0.0741875,0.0029775," +
        '"short, ""more"" than\nallowed"\r\n',
    );
  });

  it('defuses a cell a spreadsheet would run as a formula, one that starts like a number too', () => {
    expect(mismatchesCsv([{ ...row, detail: '=HYPERLINK("x")' }])).toContain(`,"'=HYPERLINK(""x"")"\r\n`);
    // The guard this replaced let anything that starts like a number through.
    expect(mismatchesCsv([{ ...row, swap_id: "-1+1+cmd|' /C calc'!A0" }])).toContain(
      `\r\np,'-1+1+cmd|' /C calc'!A0,FINISHED,`,
    );
    const last = (detail: string) =>
      mismatchesCsv([{ ...row, detail }])
        .split(',')
        .at(-1);
    expect(last('+1+1')).toBe("'+1+1\r\n");
    expect(last('@SUM(A1)')).toBe("'@SUM(A1)\r\n");
    expect(last('\t=1')).toBe("'\t=1\r\n");
    expect(last('\r=1')).toBe(`"'\r=1"\r\n`);
  });
});

describe('reconciliation checks on the swap page', () => {
  it('shows a NOT_APPLICABLE check greyed, with a neutral badge, never as a failure', () => {
    const na = checkCells({ name: 'amount.partner_side', verdict: 'NOT_APPLICABLE', detail: 'refund' })
      .map(String)
      .join('');
    expect(na).toContain('class="badge b-not_applicable"');
    expect(na).not.toMatch(/b-mismatch|b-unverifiable/);
    expect(na.match(/class="na"/g)).toHaveLength(7);
    const failing = checkCells({ name: 'amount.to_wallet', verdict: 'MISMATCH' }).map(String).join('');
    expect(failing).toContain('b-mismatch');
    expect(failing).not.toContain('class="na"');
  });
});

describe('console login', () => {
  it('lets in only a key whose digest is configured, with a session that expires', () => {
    const key = generateApiKey();
    let now = 0;
    const auth = new ConsoleAuth({ viewer: [key.sha256] }, () => now);
    expect(auth.login('slk_wrong')).toBeUndefined();
    expect(auth.login(undefined)).toBeUndefined();
    const token = auth.login(key.key)!;
    expect(auth.isSession(token)).toBe(true);
    expect(auth.isSession('forged')).toBe(false);
    now = 13 * 3600_000;
    expect(auth.isSession(token)).toBe(false);
  });

  it("gives each key its list's role, an operator name from its digest, and a CSRF token per session", () => {
    const [viewer, operator, approver] = [generateApiKey(), generateApiKey(), generateApiKey()];
    const auth = new ConsoleAuth({
      viewer: [viewer.sha256],
      operator: [operator.sha256],
      approver: [approver.sha256],
    });
    const roles = [viewer, operator, approver].map((k) => auth.session(auth.login(k.key))!);
    expect(roles.map((s) => s.role)).toEqual(['viewer', 'operator', 'approver']);
    expect(roles[1]!.operator).toBe(`console:operator:${operator.sha256.slice(0, 12)}`);
    const again = auth.session(auth.login(operator.key))!;
    expect(again.csrf).not.toBe(roles[1]!.csrf);
    expect(csrfMatches(again, again.csrf)).toBe(true);
    expect(csrfMatches(again, roles[1]!.csrf)).toBe(false);
    expect(csrfMatches(again, undefined)).toBe(false);
    expect(csrfMatches(again, '')).toBe(false);
  });

  it('reads the session cookie out of the header', () => {
    expect(cookieValue('a=1; swap_ledger_console=tok=en; b=2', 'swap_ledger_console')).toBe('tok=en');
    expect(cookieValue(undefined, 'x')).toBeUndefined();
  });
});

describe('inline SVG charts', () => {
  it('draws bars in proportion, from decimal text, with no NaN', () => {
    const svg = barChart({
      title: 't',
      bars: [
        { label: 'a', values: ['0.5', '0.5'] },
        { label: 'b', values: ['0.25', '0'] },
      ],
      series: [
        { name: 'x', colour: '#000' },
        { name: 'y', colour: '#111' },
      ],
      height: 150,
    }).text;
    expect(svg).not.toContain('NaN');
    const heights = [...svg.matchAll(/<rect[^>]*?height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights).toEqual([50, 50, 25]);
    expect(barChart({ title: 'empty', bars: [], series: [] }).text).not.toContain('NaN');
  });
});

describe('operations page: a partner base URL as shown', () => {
  it('leaves out a user:pass@ stored before loads refused it, and keeps any other URL as it is', () => {
    expect(withoutCredentials('https://u:pw@h.example/v2')).toBe('https://h.example/v2');
    expect(withoutCredentials('https://only-user@h.example/')).toBe('https://h.example/');
    expect(withoutCredentials('https://h.example/v2')).toBe('https://h.example/v2');
    expect(withoutCredentials('not a url //u:pw@x')).toBe('not a url //x');
    expect(withoutCredentials(undefined)).toBeUndefined();
  });
});

describe('console assets', () => {
  it('answers 404 to a name an object inherits, not 500', async () => {
    const { buildConsoleServer } = await import('../../src/console/server.ts');
    const { ConsoleDb } = await import('../../src/console/db.ts');
    const { createLogger } = await import('../../src/observability/log.ts');
    const logger = createLogger({ level: 'silent' });
    // No page is asked for: the pool never connects.
    const db = new ConsoleDb('postgres://nobody@127.0.0.1:1/none', 'live', 'finance', logger);
    const app = await buildConsoleServer({ db, keys: { viewer: [generateApiKey().sha256] }, logger });
    try {
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])
        expect((await app.inject({ method: 'GET', url: `/assets/${name}` })).statusCode, name).toBe(404);
      expect((await app.inject({ method: 'GET', url: '/assets/console.css' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe('the Cases page filters', () => {
  it('keeps a partner, a state, an age bucket and a check name; drops what is none of its kind', () => {
    expect(
      cleanCaseFilters({ partner: 'p', state: 'disputed', age: '7-30d', check: 'quote.fee.referral' }),
    ).toEqual({ partner: 'p', state: 'disputed', age: '7-30d', check: 'quote.fee.referral' });
    expect(
      cleanCaseFilters({ partner: 'a b', state: 'closed', age: '2d', check: "amount.to_wallet' or 1=1" }),
    ).toEqual({});
    expect(cleanCaseFilters({ check: 'x'.repeat(81) })).toEqual({});
    expect(cleanCaseFilters({ check: '%' })).toEqual({});
  });

  it('names the age buckets in one SQL case, the last one open-ended', () => {
    expect(caseAgeBucketSql('opened_at')).toBe(
      "case when now() - opened_at < interval '1 days' then '0-1d' when now() - opened_at < interval '7 days' then '1-7d' when now() - opened_at < interval '30 days' then '7-30d' else '30d+' end",
    );
  });
});
