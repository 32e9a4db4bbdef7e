// Every shipped spec file that says what to expect ("expect": "holds", or an invariant or liveness
// property that fails) is checked here, so a spec and its model cannot drift apart unnoticed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../checker/cli.ts';
import { loadSpecFile } from './load.ts';
import { benchmarks, projectRoot, shippedSpecFiles } from './shipped.ts';

const outDir = mkdtempSync(join(tmpdir(), 'txcheck-specs-'));
const specFiles = shippedSpecFiles().map((f) => relative(process.cwd(), join(projectRoot, f)));
const withExpectation = specFiles.filter((f) => loadSpecFile(f).expect !== undefined);

describe('shipped specs', () => {
  it('all load', () => {
    expect(specFiles).toContain('specs/two-phase/tp3.json');
    expect(withExpectation.length).toBeGreaterThan(0);
  });

  // Benchmarks are sized for `npm run bench`: too big for this suite, so they need not say what to expect.
  it('say what they expect, unless they are benchmarks', () => {
    expect(specFiles.filter((f) => !withExpectation.includes(f) && !benchmarks.includes(f))).toEqual([]);
    expect(benchmarks.filter((f) => !specFiles.includes(f))).toEqual([]);
  });

  it('cite the protocol notes by path, model/kafka/PROTOCOL.md, in their descriptions', () => {
    const bare = specFiles.filter((f) =>
      /(?<!model\/kafka\/)PROTOCOL\.md/.test(loadSpecFile(f).description ?? ''),
    );
    expect(bare).toEqual([]);
  });

  it.each(withExpectation)(
    '%s gives the result it expects',
    async (file) => {
      const expected = loadSpecFile(file).expect;
      let out = '';
      const code = await main(
        ['check', file, '--json', '--workers', '1', '--out', join(outDir, 'trace.itf.json')],
        { out: (t) => (out += t), err: () => {}, errIsTTY: false },
      );
      const summary = JSON.parse(out);
      if (expected === 'holds') {
        expect(summary.status).toBe('ok');
        expect(code).toBe(0);
      } else if (loadSpecFile(file).liveness.includes(expected!)) {
        // Several liveness properties may fail; the expected one must be among them, with a lasso.
        const verdict = summary.liveness?.properties.find((p: { name: string }) => p.name === expected);
        expect(verdict).toMatchObject({ status: 'violated', traceFile: expect.any(String) });
        expect(code).toBe(1);
      } else {
        expect(summary.violation?.property).toBe(expected);
        expect(code).toBe(1);
      }
    },
    60_000,
  );
});
