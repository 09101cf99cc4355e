import { describe, expect, it } from 'vitest';
import { ProvidersFileError, parseProvidersFile, readProvidersFile } from '../../src/providers/file.ts';
import { readStatement } from '../../src/monthend/layout.ts';

const EXAMPLE = new URL('../../config/providers.example.yaml', import.meta.url);

describe("a provider's statementLayout (providers file)", () => {
  it('is read from the example file and reads a statement with the provider mappings', () => {
    const [p] = readProvidersFile(EXAMPLE.pathname, { PARTNER_A_API_KEY: 'x' });
    expect(p!.statementLayout).toMatchObject({
      delimiter: ';',
      decimalSeparator: ',',
      dateFormat: 'DD.MM.YYYY HH:mm:ss',
    });
    const [line] = readStatement(
      'Txn;State;Done;Payout;Ref\nabc;finished;01.10.2026 00:00:00;1,5;0,01\nabd;done;;2;\n',
      p!.statementLayout!,
      {
        mapStatus: (w) => p!.statusMapping.statuses.get(w),
        currencies: p!.currencies,
      },
    );
    expect(line).toMatchObject({ swapId: 'abc', status: 'FINISHED', amountTo: '1.5', referralFee: '0.01' });
  });

  it('a bad section is a problem of the file, naming the provider and the key', () => {
    const yaml = `providers:\n  - id: p1\n    client: { baseUrl: 'https://p1.example' }\n    statementLayout: { decimalSeparator: ';', delimiter: ';' }\n`;
    let problems: string[] = [];
    try {
      parseProvidersFile(yaml, { env: {} });
    } catch (e) {
      expect(e).toBeInstanceOf(ProvidersFileError);
      problems = (e as ProvidersFileError).problems;
    }
    expect(problems.join('\n')).toMatch(
      /providers\[0\] \(p1\)\.statementLayout\.decimalSeparator: must be "\." or ","/,
    );
  });
});
