import { describe, expect, it } from 'vitest';
import {
  allocatePayment,
  buildInvoice,
  InvoiceRefusedError,
  type InvoiceInput,
} from '../../src/monthend/invoice.ts';
import { Decimal } from '../../src/money/decimal.ts';
import { invoiceCsv, invoiceHtml } from '../../src/monthend/invoice-render.ts';

const base: InvoiceInput = {
  providerId: 'acme',
  period: '2026-10',
  operator: 'alice',
  issuedAt: new Date('2026-11-02T09:00:00.000Z'),
  dueDays: 30,
  receivables: [
    { swapId: 's-2', currency: 'BTC', amount: '0.0001' },
    { swapId: 's-1', currency: 'BTC', amount: '0.00020' },
    { swapId: 's-3', currency: 'ETH', amount: '0.01' },
    { swapId: 's-4', currency: 'BTC', amount: '0' },
    { swapId: 's-5', currency: 'BTC', amount: '0.5' },
  ],
  disputes: new Map([['s-5', ['statement: referralFee differs (ledger 0.5, statement 0.4)']]]),
  issued: [],
  reissue: undefined,
};

describe('the referral invoice builder', () => {
  it('lists each swap in order, totals per currency without the disputed lines, and lists those apart', () => {
    const inv = buildInvoice(base);
    expect(inv.invoiceNumber).toBe('acme-2026-10');
    expect(inv.dueDate).toBe('2026-12-02');
    expect(inv.lines).toEqual([
      { swapId: 's-1', currency: 'BTC', referralFee: '0.0002', disputed: null },
      { swapId: 's-2', currency: 'BTC', referralFee: '0.0001', disputed: null },
      { swapId: 's-3', currency: 'ETH', referralFee: '0.01', disputed: null },
      {
        swapId: 's-5',
        currency: 'BTC',
        referralFee: '0.5',
        disputed: 'statement: referralFee differs (ledger 0.5, statement 0.4)',
      },
    ]);
    expect(inv.totals).toEqual([
      { currency: 'BTC', amount: '0.0003' },
      { currency: 'ETH', amount: '0.01' },
    ]);
    expect(inv.supersedes).toBeNull();
  });

  it('refuses a second issue for the month unless reissued with a reason; a reissue supersedes it', () => {
    expect(() => buildInvoice({ ...base, issued: ['acme-2026-10'] })).toThrow(InvoiceRefusedError);
    expect(() => buildInvoice({ ...base, issued: ['acme-2026-10'] })).toThrow(/--reissue --reason/);
    const again = buildInvoice({ ...base, issued: ['acme-2026-10'], reissue: { reason: 'late fact' } });
    expect(again.invoiceNumber).toBe('acme-2026-10-r2');
    expect(again.supersedes).toBe('acme-2026-10');
    expect(again.reason).toBe('late fact');
    expect(buildInvoice({ ...base, issued: ['a', 'b'], reissue: { reason: 'x' } }).invoiceNumber).toBe(
      'acme-2026-10-r3',
    );
  });

  it('refuses a due period that is not whole days', () => {
    expect(() => buildInvoice({ ...base, dueDays: 1.5 })).toThrow(/--due-days/);
    expect(() => buildInvoice({ ...base, dueDays: -1 })).toThrow(/--due-days/);
  });

  it('renders CSV with formula cells neutralised and HTML escaped', () => {
    const inv = {
      ...buildInvoice({
        ...base,
        receivables: [{ swapId: '=cmd|x', currency: 'BTC', amount: '1' }],
        disputes: new Map([['<b>', ['a <script>']]]),
      }),
      providerId: 'acme',
    };
    inv.lines.push({ swapId: '<b>', currency: 'BTC', referralFee: '2', disputed: 'a <script>' });
    const csv = invoiceCsv(inv);
    expect(csv).toContain("'=cmd|x,BTC,1\r\n");
    expect(csv).toContain('<b>,BTC,2,a <script>\r\n');
    const html = invoiceHtml(inv);
    expect(html).toContain('&lt;b&gt;');
    expect(html).toContain('a &lt;script&gt;');
    expect(html).not.toContain('<script>');
  });
});

describe("a payment split across an invoice's lines", () => {
  const lines = [
    { swapId: 's-1', swapVersion: 2, fee: '0.0002', settled: '0.0002' },
    { swapId: 's-2', swapVersion: 3, fee: '0.0003', settled: '0.0001' },
    { swapId: 's-3', swapVersion: 1, fee: '0.0005', settled: '0' },
  ];
  it('goes in line order, each line up to what it still owes, a paid line skipped; the rest stays open', () => {
    expect(allocatePayment('acme-2026-10', 'BTC', new Decimal('0.0004'), lines)).toEqual([
      { swapId: 's-2', swapVersion: 3, amount: '0.0002' },
      { swapId: 's-3', swapVersion: 1, amount: '0.0002' },
    ]);
    expect(allocatePayment('acme-2026-10', 'BTC', new Decimal('0.0007'), lines)).toHaveLength(2);
  });
  it('refuses an overpayment, naming what is outstanding', () => {
    expect(() => allocatePayment('acme-2026-10', 'BTC', new Decimal('0.00071'), lines)).toThrow(
      '--amount 0.00071 BTC is more than invoice acme-2026-10 has outstanding (0.0007 BTC)',
    );
  });
});
