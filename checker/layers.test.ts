// The layers of the project and what each may import (ARCHITECTURE.md, "Layers"), checked on the source
// files themselves: the engine imports only itself, a model only itself and the engine's Model
// interface and the report contract, only the tools use the referee (the real brokers), and no
// module imports itself back through others.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

type Imports = ReadonlyMap<string, readonly string[]>;

const importPatterns = [
  /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms,
  /^\s*import\s+'([^']+)'/gm,
  /import\(\s*'([^']+)'\s*\)/g,
];
/** A module started on a worker thread, named by its URL. */
const spawnPattern = /new URL\(\s*'([^']+\.(?:ts|mjs))'\s*,\s*import\.meta\.url\)/g;

/** What a module imports (static and type imports, re-exports, import()) or, with `spawns`, starts as a worker. */
export function specifiers(text: string, spawns = false): string[] {
  return (spawns ? [spawnPattern] : importPatterns).flatMap((p) => [...text.matchAll(p)].map((m) => m[1]!));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Module → what it imports (or starts as a worker): project paths for relative specifiers, bare names otherwise. */
function projectGraph(spawns: boolean): Imports {
  const graph = new Map<string, string[]>();
  for (const file of ['checker', 'model', 'specs', 'traces', 'referee'].flatMap(sourceFiles)) {
    const text = readFileSync(join(root, file), 'utf8');
    graph.set(
      file,
      specifiers(text, spawns).map((s) =>
        s.startsWith('.') ? relative(root, resolve(root, dirname(file), s)) : s,
      ),
    );
  }
  return graph;
}

/** The import cycles: one module list per strongly connected component with more than one module or a self-import. */
export function cycles(graph: Imports): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const ENGINE = 'checker/engine/';
/** The packages of the design card the engine may use, beside Node's built-ins. */
const ENGINE_PACKAGES = ['seedrandom', 'tsx/esm/api'];
/** What a model may take from outside its own folder: the Model interface and the report contract (types). */
const MODEL_MAY_USE = ['checker/engine/model.ts', 'checker/report/renderer.ts'];

/** Why `from` may not import `to`, or undefined when the layers allow it. */
export function layerViolation(from: string, to: string): string | undefined {
  const bare = !/^(checker|model|specs|traces|referee)\//.test(to);
  if (from.startsWith(ENGINE)) {
    if (bare)
      return to.startsWith('node:') || ENGINE_PACKAGES.includes(to)
        ? undefined
        : 'the engine uses Node built-ins and the card packages only';
    return to.startsWith(ENGINE) ? undefined : 'the engine imports nothing outside checker/engine/';
  }
  const model = /^model\/[^/]+\//.exec(from)?.[0];
  if (model !== undefined) {
    if (bare) return 'a model does no I/O and uses no package';
    return to.startsWith(model) || MODEL_MAY_USE.includes(to)
      ? undefined
      : `a model imports only itself and ${MODEL_MAY_USE.join(', ')}`;
  }
  if (from.startsWith('referee/')) {
    if (bare) return to.startsWith('node:') ? undefined : 'the referee uses Node built-ins only';
    if (to.startsWith('checker/') && !to.startsWith(ENGINE))
      return 'the referee reads models and traces, not the tools built on them';
    return undefined;
  }
  if (to.startsWith('referee/') && !(from.startsWith('checker/') && !from.startsWith(ENGINE)))
    return 'only the tools in checker/ use the referee';
  if (from.startsWith('specs/')) {
    if (to.startsWith('checker/') && !to.startsWith(ENGINE) && to !== 'checker/report/renderer.ts')
      return 'the spec layer uses the engine, not the tools built on it';
    return undefined;
  }
  if (from.startsWith('checker/') && to.startsWith('model/'))
    return 'the tools reach models through specs/, never directly';
  return undefined;
}

describe('layers', () => {
  const graph = projectGraph(false);
  // A worker's entry module is named by URL, not imported: it can import its starter without a cycle.
  const workers = projectGraph(true);

  it('reads the imports of every module', () => {
    expect(graph.get('checker/cli/commands/check.ts')).toContain('checker/engine/search.ts');
    expect(workers.get('checker/engine/parallel/bfs.ts')).toContain('checker/engine/parallel/worker.ts');
    expect(graph.get('model/kafka/config.ts')).toContain('model/kafka/state.ts');
    expect(graph.get('referee/broker.ts')).toContain('referee/driver/connection.ts');
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('keeps every import within the layers', () => {
    const wrong = [...graph, ...workers].flatMap(([from, tos]) =>
      tos.flatMap((to) => {
        const why = layerViolation(from, to);
        return why === undefined ? [] : [`${from} → ${to}: ${why}`];
      }),
    );
    expect(wrong).toEqual([]);
  });

  it('would catch a cycle and a wrong import', () => {
    const circle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(circle)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(cycles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
    expect(layerViolation('checker/engine/bfs.ts', 'specs/load.ts')).toBeDefined();
    expect(layerViolation('checker/engine/random.ts', 'vitest')).toBeDefined();
    expect(layerViolation('model/kafka/render/steps.ts', 'checker/report/report.ts')).toBeDefined();
    expect(layerViolation('model/kafka/coordinator.ts', 'model/two-phase/index.ts')).toBeDefined();
    expect(layerViolation('model/kafka/liveness.ts', 'specs/registry.ts')).toBeDefined();
    expect(layerViolation('model/kafka/state.ts', 'node:fs')).toBeDefined();
    expect(layerViolation('specs/load.ts', 'checker/cli.ts')).toBeDefined();
    expect(layerViolation('checker/cli.ts', 'model/kafka/index.ts')).toBeDefined();
    expect(layerViolation('model/kafka/render/steps.ts', 'checker/report/renderer.ts')).toBeUndefined();
    expect(layerViolation('model/kafka/state.ts', 'referee/broker.ts')).toBeDefined();
    expect(layerViolation('checker/engine/trace.ts', 'referee/replay.ts')).toBeDefined();
    expect(layerViolation('specs/load.ts', 'referee/broker.ts')).toBeDefined();
    expect(layerViolation('referee/broker.ts', 'checker/cli.ts')).toBeDefined();
    expect(layerViolation('referee/driver/connection.ts', 'vitest')).toBeDefined();
    expect(layerViolation('referee/replay.ts', 'model/kafka/state.ts')).toBeUndefined();
    expect(layerViolation('checker/cli.ts', 'referee/replay.ts')).toBeUndefined();
    expect(
      specifiers(
        "import type { A } from './a.ts';\nexport { b } from '../b.ts';\nconst w = new URL('./w.ts', import.meta.url);",
      ),
    ).toEqual(['./a.ts', '../b.ts']);
    expect(specifiers("const w = new URL('./w.ts', import.meta.url);", true)).toEqual(['./w.ts']);
  });
});
