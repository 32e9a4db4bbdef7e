// show (every format) and report on Kafka traces of every generation: traces with partition
// verification (kafka-3.6 and later), with markers re-sent after a coordinator failover, and
// lassos. The traces are made here from small specs, so they follow the model as it is.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { bfs } from '../engine/bfs.ts';
import type { Model } from '../engine/model.ts';
import { traceText } from '../engine/trace.ts';
import { parseSpec } from '../../specs/load.ts';
import { TOOL } from '../version.ts';

const generations = [
  'kafka-0.11',
  'kafka-3.5',
  'kafka-3.6',
  'kafka-3.8',
  'kafka-4.0',
  'kafka-4.1',
  'kafka-latest',
];
const verifying = new Set(['kafka-3.6', 'kafka-3.8', 'kafka-4.0', 'kafka-4.1', 'kafka-latest']);
const dir = mkdtempSync(join(tmpdir(), 'txcheck-generations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    errIsTTY: false,
  });
  return { code, out, err };
}

/** A spec file under kafka's `generation` with the read-past-LSO mutant, so it has a short counterexample. */
function mutantSpec(name: string, generation: string, fields: object): string {
  const file = join(dir, `${name}.${generation}.json`);
  const spec = {
    model: 'kafka',
    variant: { base: generation, enable: ['mutantReadPastLso'] },
    partitions: 1,
    consumers: { readCommitted: 1 },
    properties: ['ReadCommittedIsolation'],
    deadlock: true,
    ...fields,
  };
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

/**
 * The shortest path of `spec` to a state violating `property` that takes actions matching
 * `through`, in this order: a trace `check` would not pick, written as `check` writes traces.
 */
function traceThrough(specFile: string, property: string, through: readonly RegExp[]): string {
  const spec = parseSpec(specFile, JSON.parse(readFileSync(specFile, 'utf8')), '');
  const model = spec.entry.build(spec.params, spec.properties) as Model<unknown, unknown>;
  const broken = model.invariants.find((p) => p.name === property)!;
  type Tracked = { s: unknown; taken: number };
  const tracked: Model<Tracked, unknown> = {
    init: () => model.init().map((s) => ({ s, taken: 0 })),
    actions: (t) => model.actions(t.s),
    next: (t, a) => ({
      s: model.next(t.s, a),
      taken: t.taken + (through[t.taken]?.test(model.label(a)) === true ? 1 : 0),
    }),
    label: (a) => model.label(a),
    kind: (a) => model.kind(a),
    actionKinds: model.actionKinds,
    invariants: [
      { name: property, description: '', holds: (t) => t.taken < through.length || broken.holds(t.s) },
    ],
  };
  const { trace } = bfs(tracked, { deadlockAllowed: true }).violation!;
  const file = specFile.replace(/\.json$/, '.itf.json');
  const states = (trace.states as Tracked[]).map((t) => t.s);
  writeFileSync(
    file,
    traceText(
      model,
      { states, actions: trace.actions },
      { tool: TOOL, spec: spec.raw, specFile, strategy: 'bfs', property, description: 'made by the test' },
    ),
  );
  return file;
}

interface Shown {
  participants: string[];
  steps: {
    step: number;
    label: string;
    actor: string;
    action: string;
    events: { kind: string; from?: string; to?: string; text: string }[];
  }[];
}

/** show in every format and report on `trace`; returns the JSON form after checking the others agree with it. */
async function showAll(trace: string): Promise<Shown> {
  const json = await cli(['show', trace, '--format', 'json']);
  expect(json.err).toBe('');
  expect(json.code).toBe(0);
  const shown = JSON.parse(json.out) as Shown;
  const recorded = JSON.parse(readFileSync(trace, 'utf8')) as { states: { '#meta': { action?: string } }[] };
  const labels = recorded.states.slice(1).map((s) => s['#meta'].action);
  expect(shown.steps.slice(1).map((s) => s.label)).toEqual(labels);
  // Every actor and every end of an arrow is a lifeline of the diagram.
  const lifelines = new Set([...shown.participants, 'network']);
  for (const s of shown.steps.slice(1)) {
    expect(lifelines, `step ${s.step} ${s.label}`).toContain(s.actor);
    for (const e of s.events)
      for (const end of [e.from, e.to])
        if (end !== undefined) expect(lifelines, `step ${s.step} ${s.label}`).toContain(end);
  }
  const text = await cli(['show', trace]);
  expect([text.code, text.err]).toEqual([0, '']);
  for (const s of shown.steps.slice(1))
    expect(text.out).toMatch(new RegExp(`^ +${s.step}  ${s.actor} +\\S`, 'm'));
  const mermaid = await cli(['show', trace, '--format', 'mermaid']);
  expect([mermaid.code, mermaid.err]).toEqual([0, '']);
  expect(mermaid.out).toMatch(/^sequenceDiagram\n/);
  const html = join(dir, 'report.html');
  const report = await cli(['report', trace, '-o', html]);
  expect([report.code, report.err]).toEqual([0, '']);
  expect(readFileSync(html, 'utf8')).toContain('</html>');
  return shown;
}

describe.each(generations)('show and report on %s traces', (generation) => {
  it('a counterexample with the partition verification of its generation', async () => {
    const spec = mutantSpec('verification', generation, {});
    const trace = join(dir, `verification.${generation}.itf.json`);
    expect((await cli(['check', spec, '--workers', '1', '-o', trace])).code).toBe(1);
    const shown = await showAll(trace);
    const verifications = shown.steps.filter((s) => s.label.includes('(verification)'));
    expect(verifications.length > 0).toBe(verifying.has(generation));
    // The leader asks the coordinator, which answers the leader.
    for (const s of verifications) {
      const [message] = s.events;
      expect([message?.from, message?.to].sort()).toEqual(['L0', 'TC']);
    }
  });

  it('a counterexample where the new coordinator re-sends a marker after failover', async () => {
    const spec = mutantSpec('failover', generation, {
      transactionsPerInstance: 2,
      faults: { coordinatorFailovers: 1 },
    });
    const trace = traceThrough(spec, 'ReadCommittedIsolation', [
      /^TC: coordinatorFailover$/,
      /^deliver TC→L0#1: WriteTxnMarkers$/,
    ]);
    const shown = await showAll(trace);
    const failover = shown.steps.findIndex((s) => s.label === 'TC: coordinatorFailover');
    const marker = shown.steps.findIndex((s) =>
      s.events.some((e) => e.kind === 'message' && e.from === 'TC' && / coordinator epoch 1\)/.test(e.text)),
    );
    expect(failover).toBeGreaterThan(0);
    expect(marker).toBeGreaterThan(failover);
  });

  it('a lasso: a lost EndTxn with no request timeout leaves the transaction open for good', async () => {
    const file = join(dir, `lasso.${generation}.json`);
    const fairness = [
      'deliver',
      'sendTxnRequest',
      'sendProduce',
      'resendTxnMarker',
      'completeTransaction',
      'verificationTimeout',
      'fetch',
    ];
    writeFileSync(
      file,
      JSON.stringify({
        model: 'kafka',
        variant: generation,
        faults: { requestLoss: 1 },
        properties: [],
        liveness: ['TransactionsComplete'],
        fairness,
        deadlock: true,
      }),
    );
    const trace = join(dir, `lasso.${generation}.itf.json`);
    expect((await cli(['check', file, '--workers', '1', '-o', trace])).code).toBe(1);
    expect(JSON.parse(readFileSync(trace, 'utf8')).loop).toBeTypeOf('number');
    const shown = await showAll(trace);
    expect(shown.steps.some((s) => s.label.startsWith('lose '))).toBe(true);
  });
});

// Only the generations with partition verification have a verification to lose.
describe.each([...verifying])('show and report on %s traces with verification', (generation) => {
  it('a counterexample where a leader gives up a lost verification', async () => {
    const spec = mutantSpec('verification-timeout', generation, { faults: { requestLoss: 1 } });
    const shown = await showAll(
      traceThrough(spec, 'ReadCommittedIsolation', [
        /^lose L0→TC \(verification\)/,
        /^L0: verificationTimeout/,
      ]),
    );
    const timeout = shown.steps.find((s) => s.label.startsWith('L0: verificationTimeout'))!;
    expect(timeout.actor).toBe('L0');
    expect(timeout.action).toMatch(
      /^verification with the coordinator timed out .*sends Produce response NOT_ENOUGH_REPLICAS/,
    );
  });
});
