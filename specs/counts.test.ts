// The reviewed table of state counts (specs/counts.json, written by `npm run counts -- --write`):
// it has a row for every shipped spec under every generation, and the rows small enough for this
// suite are recounted here. `npm run counts` recounts every row.
import { describe, expect, it } from 'vitest';
import { count, readCounts, rows } from '../checker/counts.ts';

/** Rows up to this many states are recounted in the suite; the rest by `npm run counts`. */
const RECOUNT_UP_TO = 20_000;

describe('the reviewed table of state counts', () => {
  const table = readCounts();
  const expected = rows();

  it('has one row for each shipped spec under each generation, and no other', () => {
    const listed = Object.entries(table).flatMap(([file, byVariant]) =>
      Object.keys(byVariant).map((variant) => `${file} ${variant}`),
    );
    expect(listed.sort()).toEqual(expected.map((r) => `${r.file} ${r.variant}`).sort());
  });

  const small = expected.filter((r) => (table[r.file]?.[r.variant]?.distinctStates ?? 0) <= RECOUNT_UP_TO);
  it.each(small.map((r) => [r.file, r.variant || '(as written)', r.variant]))(
    '%s %s: the count and result the table records',
    (file, _shown, variant) => {
      expect(count(file, variant)).toEqual(table[file]![variant]);
    },
  );
});
