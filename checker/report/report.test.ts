import { describe, expect, it } from 'vitest';
import { renderMermaid } from './mermaid.ts';
import { buildReport, diffFields } from './report.ts';
import { renderText } from './text.ts';

describe('diffFields', () => {
  it('gives the paths of changed leaves, appended and removed items', () => {
    const before = { a: 1, b: { c: [1, 2] }, d: 'x' };
    const after = { a: 1, b: { c: [1, 3, 4] }, d: 'y' };
    expect(diffFields(before, after)).toEqual([
      { path: 'b.c[1]', before: '2', after: '3' },
      { path: 'b.c[2]', after: '4' },
      { path: 'd', before: '"x"', after: '"y"' },
    ]);
    expect(diffFields({ a: [1] }, { a: [] })).toEqual([{ path: 'a[0]', before: '1' }]);
  });
});

describe('a report without a model renderer', () => {
  const report = buildReport({
    traceFile: 't.itf.json',
    specFile: 's.json',
    model: 'toy',
    specDescription: '',
    property: 'Safe',
    propertyDescription: 'x stays below 2',
    states: [{ x: 0 }, { x: 1 }, { x: 2 }],
    labels: ['Inc; then #1', 'Inc'],
  });

  it('shows labels and changed fields, and says which property fails where', () => {
    const text = renderText(report);
    expect(text).toContain('  1         Inc; then #1\n            · x: 0 → 1\n');
    expect(text).toContain('Why: Safe (x stays below 2) does not hold in the state after step 2.');
  });

  it('draws one lifeline, with the characters mermaid reserves escaped', () => {
    const mermaid = renderMermaid(report);
    expect(mermaid).toContain('participant system as system');
    expect(mermaid).toContain('Note over system: 1: Inc#59; then #35;1');
    expect(mermaid).toMatch(/Note over system: ✗ Safe violated/);
  });
});
