import { describe, expect, it } from 'vitest';
import {
  decodeSwapPayload,
  describeSwapPayload,
  deviceRuleFindings,
  PayloadDecodeError,
  type Finding,
} from '../../src/payload/index.ts';
import { BASE_FIELDS, R1, SIGNED, TAMPERED_PAYLOAD, VECTOR } from '../fixtures/payload/vectors.ts';

const fromHex = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
const problems = (findings: Finding[]) => findings.filter((f) => f.outcome !== 'ok');
const DEVICE_CHECKS = [
  'device.device_transaction_id_ng.length',
  'device.amount_to_provider.length',
  'device.amount_to_provider.nonzero',
  'device.amount_to_wallet.length',
  'device.amount_to_wallet.nonzero',
  'device.payin_extra.exclusive',
  'device.payin_extra_data.length',
];

describe('decodeSwapPayload', () => {
  it('decodes the public test vector to the fields of docs/architecture.md', () => {
    const decoded = decodeSwapPayload(VECTOR.payload);
    expect(decoded.currency_from).toBe('BTC');
    expect(decoded.currency_to).toBe('BAT');
    expect(decoded.amount_to_provider).toBe(1150n);
    expect(decoded.amount_to_wallet).toBe(6000000000000n);
    expect(decoded.payout_address).toBe('0xb794f5ea0ba39494ce839613fffba74279579268');
    expect(describeSwapPayload(decoded)).toEqual(VECTOR.fields);
  });

  it('reads padded and unpadded base64url alike', () => {
    expect(describeSwapPayload(decodeSwapPayload(VECTOR.payload.replace(/=+$/, '')))).toEqual(VECTOR.fields);
  });

  it('decodes a hand-built payload with extra ids', () => {
    expect(describeSwapPayload(decodeSwapPayload(R1.payload))).toEqual(BASE_FIELDS);
  });

  it('decodes the tampered vector, so only the signature can tell', () => {
    expect(decodeSwapPayload(TAMPERED_PAYLOAD).amount_to_provider).toBe(1151n);
  });

  it('decodes amounts above 2^64 exactly', () => {
    const decoded = decodeSwapPayload(SIGNED.bigAmounts.payload);
    expect(decoded.amount_to_provider).toBe(18446744073709551617n);
    expect(decoded.amount_to_wallet).toBe(340282366920938463463374607431768211455n);
    expect(describeSwapPayload(decoded).amount_to_wallet).toBe('340282366920938463463374607431768211455');
    expect(problems(deviceRuleFindings(decoded))).toEqual([]);
  });

  it('keeps absent fields at their proto3 defaults', () => {
    const decoded = decodeSwapPayload(fromHex('3a03425443')); // currency_from "BTC" only
    expect(decoded.currency_from).toBe('BTC');
    expect(decoded.amount_to_provider).toBe(0n);
    expect(decoded.payin_extra_id).toBe('');
    expect(decoded.device_transaction_id_ng).toEqual(new Uint8Array());
  });

  it('skips unknown fields', () => {
    expect(decodeSwapPayload(fromHex('3a03425443720141')).currency_from).toBe('BTC');
  });

  it.each([
    ['standard base64 characters', VECTOR.payload.replace(/-/g, '+'), 'base64url', /standard base64/],
    [
      'whitespace',
      VECTOR.payload.slice(0, 10) + ' ' + VECTOR.payload.slice(10),
      'base64url',
      /not base64url/,
    ],
    ['a dangling character', 'CipiY', 'base64url', /not a possible base64url length/],
    ['broken padding', 'Ci=', 'base64url', /padding/],
    ['padding inside the text', 'Ci==pA', 'base64url', /"=" at 2/],
    ['nothing', '', 'empty', /empty/],
    ['a wrong wire type', fromHex('0801'), 'protobuf', /wire type 0/],
    ['a truncated field', fromHex('0a05616263'), 'protobuf', /out of range/],
    ['invalid UTF-8 in a string field', fromHex('0a01ff'), 'protobuf', /payin_address.*UTF-8/],
  ])('refuses %s with a typed error', (_, text, failure, message) => {
    let error: unknown;
    try {
      decodeSwapPayload(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PayloadDecodeError);
    expect((error as PayloadDecodeError).failure).toBe(failure);
    expect((error as Error).message).toMatch(message);
  });
});

describe('deviceRuleFindings', () => {
  it('passes every rule on the public vector, reporting each as ok', () => {
    const findings = deviceRuleFindings(decodeSwapPayload(VECTOR.payload));
    expect(findings.map((f) => f.check)).toEqual(DEVICE_CHECKS);
    expect(problems(findings)).toEqual([]);
  });

  it.each([
    [
      'idNg31',
      {
        check: 'device.device_transaction_id_ng.length',
        outcome: 'violation',
        expected: '32 bytes',
        actual: '31 bytes',
      },
    ],
    [
      'idNgAbsent',
      {
        check: 'device.device_transaction_id_ng.length',
        outcome: 'violation',
        expected: '32 bytes',
        actual: '0 bytes',
      },
    ],
    [
      'amount17Bytes',
      {
        check: 'device.amount_to_provider.length',
        outcome: 'violation',
        expected: 'at most 16 bytes',
        actual: '17 bytes',
      },
    ],
    [
      'amountPaddedTo17',
      {
        check: 'device.amount_to_wallet.length',
        outcome: 'violation',
        expected: 'at most 16 bytes',
        actual: '17 bytes',
      },
    ],
    [
      'extraBoth',
      {
        check: 'device.payin_extra.exclusive',
        outcome: 'violation',
        expected: 'payin_extra_id and payin_extra_data not both set',
        actual: 'both set',
      },
    ],
    [
      'extraData2',
      {
        check: 'device.payin_extra_data.length',
        outcome: 'violation',
        expected: 'empty, a single 0x00 byte, or 33 bytes',
        actual: '2 bytes',
      },
    ],
    [
      'extraData01',
      {
        check: 'device.payin_extra_data.length',
        outcome: 'violation',
        expected: 'empty, a single 0x00 byte, or 33 bytes',
        actual: '1 byte 0x01',
      },
    ],
  ] as const)('%s breaks exactly one rule', (fixture, expected) => {
    expect(problems(deviceRuleFindings(decodeSwapPayload(SIGNED[fixture].payload)))).toEqual([expected]);
  });

  it('flags both zero amounts, absent and explicit 0x00', () => {
    const decoded = decodeSwapPayload(SIGNED.amountZero.payload);
    expect(decoded.amount_to_provider).toBe(0n);
    expect(decoded.amount_to_wallet).toBe(0n);
    expect(problems(deviceRuleFindings(decoded))).toEqual([
      { check: 'device.amount_to_provider.nonzero', outcome: 'violation', expected: 'not zero', actual: '0' },
      { check: 'device.amount_to_wallet.nonzero', outcome: 'violation', expected: 'not zero', actual: '0' },
    ]);
  });

  it.each(['extraData00', 'extraData33', 'extraIdOnly'] as const)('accepts %s', (fixture) => {
    expect(problems(deviceRuleFindings(decodeSwapPayload(SIGNED[fixture].payload)))).toEqual([]);
  });

  it('says which payin extra is set when only one is', () => {
    const exclusive = (name: 'extraIdOnly' | 'extraData33') =>
      deviceRuleFindings(decodeSwapPayload(SIGNED[name].payload)).find(
        (f) => f.check === 'device.payin_extra.exclusive',
      );
    expect(exclusive('extraIdOnly')?.actual).toBe('payin_extra_id only');
    expect(exclusive('extraData33')?.actual).toBe('payin_extra_data only');
  });
});
