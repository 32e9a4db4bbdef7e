import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepEqual, fingerprintHex } from './fingerprint.ts';

/** Plain data as states hold it. */
const plainData = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** The same data with every object's keys inserted in reverse order. */
function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reverseKeys(x)]),
    );
  }
  return v;
}

describe('fingerprint', () => {
  it("runs its properties from the suite's fixed seed (checker/vitest.setup.ts)", () => {
    expect(fc.readConfigureGlobal().seed).toBeTypeOf('number');
  });

  it('does not depend on the order of object keys', () => {
    fc.assert(fc.property(plainData, (v) => fingerprintHex(v) === fingerprintHex(reverseKeys(v))));
  });

  it('agrees with deepEqual: equal data hash alike, and different hashes mean different data', () => {
    fc.assert(
      fc.property(plainData, plainData, (a, b) => {
        const sameHash = fingerprintHex(a) === fingerprintHex(b);
        if (deepEqual(a, b)) return sameHash;
        return !sameHash;
      }),
    );
  });

  it('tells apart values that print alike', () => {
    const values = [
      1,
      '1',
      [1],
      { '0': 1 },
      true,
      'true',
      null,
      'null',
      [],
      {},
      '',
      0,
      [[]],
      [{}],
      { a: [] },
      { a: {} },
      1.5,
      -1,
    ];
    const hashes = new Set(values.map(fingerprintHex));
    expect(hashes.size).toBe(values.length);
  });

  it('distinguishes 250,000 small states without a collision', () => {
    const hashes = new Set<string>();
    for (let i = 0; i < 500; i++)
      for (let j = 0; j < 500; j++) hashes.add(fingerprintHex({ a: i, b: [j, i & 3] }));
    expect(hashes.size).toBe(250_000);
  });

  it('rejects what is not plain data', () => {
    expect(() => fingerprintHex({ f: () => 1 })).toThrow(/not plain data/);
    expect(() => fingerprintHex([undefined])).toThrow(/not plain data/);
  });
});

describe('deepEqual', () => {
  it('ignores key order but not values, types or lengths', () => {
    expect(deepEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(deepEqual([1], { '0': 1 })).toBe(false);
    expect(deepEqual('1', 1)).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
  });
});
