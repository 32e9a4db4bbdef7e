// What a check prints at the end: the text summary, with the counterexample step by step, or one
// JSON object.
import type { RunOptions, Spec } from '../../specs/load.ts';
import { type Lasso, type LivenessResult, describeFairness } from '../engine/liveness.ts';
import type { Model } from '../engine/model.ts';
import {
  DEADLOCK,
  HEAP_SHARE,
  MACHINE_SHARE,
  type Limit,
  type Result,
  type Trace,
} from '../engine/search.ts';
import { stateView } from '../engine/trace.ts';
import { TOOL } from '../version.ts';

/** What a check found, and where it wrote its traces, as its summary tells it. */
export interface CheckOutcome {
  readonly spec: Spec;
  readonly options: RunOptions;
  readonly workers: number;
  readonly model: Model<unknown, unknown>;
  readonly result: Result;
  /** The file of the invariant violation's trace. */
  readonly traceFile: string | undefined;
  readonly live: LivenessResult | undefined;
  /** The file of each violated liveness property's lasso. */
  readonly lassoFiles: ReadonlyMap<string, string>;
  readonly shrunkFrom: number | undefined;
  /** The signal that stopped the search. */
  readonly signal: string | undefined;
}

export const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The bound a run stopped at, as its summary names it. */
function limitText(limit: Limit, options: RunOptions): string {
  if (limit !== 'maxMemory') return String(options[limit as keyof RunOptions]);
  const share = `${Math.round(HEAP_SHARE * 100)} % of the heap`;
  return options.maxMemory === undefined
    ? `${Math.round(MACHINE_SHARE * 100)} % of the machine's available memory, or ${share}`
    : `${options.maxMemory} MB resident, or ${share}`;
}

export function overallStatus(result: Result, live: LivenessResult | undefined): Result['status'] {
  return result.status !== 'ok' || live === undefined ? result.status : live.status;
}

/** Steps in a lasso: to the last state, plus the step back to the cycle's start. */
function lassoLength(lasso: Lasso): number {
  return lasso.actions.length + (lasso.loopAction === undefined ? 0 : 1);
}

function livenessJson(spec: Spec, live: LivenessResult, files: ReadonlyMap<string, string>): unknown {
  const { states, edges, seconds, bytes, stoppedBy, verdicts } = live;
  return {
    fairness: spec.fairness.map(describeFairness),
    states,
    edges,
    seconds,
    bytes,
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    properties: verdicts.map(({ property, goals, lasso }) => ({
      name: property,
      goals,
      status: lasso === undefined ? 'holds' : 'violated',
      ...(lasso === undefined
        ? {}
        : { goal: lasso.goal, length: lassoLength(lasso), loop: lasso.loop, traceFile: files.get(property) }),
    })),
  };
}

/** The summary as one JSON object, for --json. */
export function jsonSummary(outcome: CheckOutcome): object {
  const { spec, result, options, workers, traceFile, live, lassoFiles, shrunkFrom, signal } = outcome;
  const { distinctStates, statesGenerated, depth, seconds, coverage, violation, memory } = result;
  const stoppedBy = result.stoppedBy ?? live?.stoppedBy;
  const lasso = live?.verdicts.find((v) => v.lasso !== undefined);
  return {
    status: overallStatus(result, live),
    distinctStates,
    statesGenerated,
    depth,
    seconds,
    coverage,
    strategy: options.strategy,
    workers,
    ...(options.strategy === 'random' ? { seed: options.seed } : {}),
    ...(spec.reduction ? { reduction: 'por', reducedStates: result.reducedStates } : {}),
    ...(spec.sleep ? { reduction: 'sleep' } : {}),
    ...(memory === undefined ? {} : { memory }),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    ...(violation === undefined
      ? {}
      : {
          violation: {
            property: violation.property,
            length: violation.trace.actions.length,
            traceFile,
            ...(violation.walk === undefined ? {} : { walk: violation.walk }),
            ...(shrunkFrom === undefined ? {} : { shrunkFrom }),
          },
        }),
    ...(lasso?.lasso === undefined
      ? {}
      : {
          violation: {
            property: lasso.property,
            goal: lasso.lasso.goal,
            length: lassoLength(lasso.lasso),
            loop: lasso.lasso.loop,
            traceFile: lassoFiles.get(lasso.property),
          },
        }),
    ...(live === undefined ? {} : { liveness: livenessJson(spec, live, lassoFiles) }),
    ...(signal === undefined ? {} : { signal }),
  };
}

/** The summary as text: the search, its coverage, and the verdict with its counterexample. */
export function textSummary(outcome: CheckOutcome): string {
  const { spec, options, workers, model, result, traceFile, live, lassoFiles, shrunkFrom, signal } = outcome;
  const lines: string[] = [];
  const threads = workers === 1 ? '' : `, ${workers} workers`;
  const reduced = spec.reduction ? ', partial-order reduction' : spec.sleep ? ', sleep sets' : '';
  const searched = `${options.strategy === 'random' ? `random walks, seed ${options.seed}` : 'breadth-first'}${reduced}${threads}`;
  lines.push(`${TOOL}: ${spec.file} (model ${spec.entry.name}, ${searched})`);
  lines.push(
    `Checking ${spec.properties.join(', ') || 'no invariants'}; deadlock ${spec.deadlockAllowed ? 'allowed' : 'reported'}.`,
  );
  if (spec.liveness.length > 0) {
    const fairness =
      spec.fairness.length === 0
        ? 'no fairness at all'
        : `weak fairness of ${spec.fairness.map(describeFairness).join('; ')}`;
    lines.push(`Then liveness: ${spec.liveness.join(', ')}, under ${fairness}.`);
  }
  const perSecond = result.seconds > 0 ? ` (${count(result.statesGenerated / result.seconds)} states/s)` : '';
  lines.push(
    `${count(result.distinctStates)} distinct states, ${count(result.statesGenerated)} states generated, ` +
      `depth ${result.depth}, ${result.seconds.toFixed(2)} s${perSecond}`,
  );
  lines.push('Coverage (successors computed per action):');
  const width = Math.max(...Object.keys(result.coverage.fired).map((k) => k.length));
  for (const [kind, n] of Object.entries(result.coverage.fired))
    lines.push(`  ${kind.padEnd(width)}  ${count(n).padStart(12)}`);
  lines.push(`  never fired: ${result.coverage.neverFired.join(', ') || 'none'}`);

  if (result.status === 'ok' && live !== undefined) {
    lines.push(...livenessLines(spec, model, result, live, lassoFiles));
  } else if (result.status === 'ok') {
    lines.push(
      spec.reduction
        ? `Result: ok. ${spec.properties.join(' and ') || 'No invariant'} hold${spec.properties.length === 1 ? 's' : ''} in all ${count(result.distinctStates)} states of the reduced graph, and so in every reachable state.`
        : `Result: ok. ${spec.properties.join(' and ') || 'No invariant'} hold${spec.properties.length === 1 ? 's' : ''} in all ${count(result.distinctStates)} reachable states.`,
    );
  } else if (result.stoppedBy === 'walks') {
    lines.push(
      `Result: incomplete. No violation found in ${count(options.walks)} walks of up to ${options.maxDepth} steps; ` +
        'random walks do not cover every state, so nothing is claimed.',
    );
  } else if (result.stoppedBy === 'signal') {
    lines.push(
      `Result: incomplete. Stopped by signal (${signal ?? 'a request to stop'}) at depth ${result.depth}; no violation in the states covered, ` +
        'which says nothing about the rest.',
    );
  } else if (result.status === 'incomplete') {
    lines.push(
      `Result: incomplete. Stopped at ${result.stoppedBy} (${limitText(result.stoppedBy!, options)}); no violation in the states covered, ` +
        'which says nothing about the rest.',
    );
  } else {
    const { property, trace, walk } = result.violation!;
    const where = walk === undefined ? '' : ` in walk ${walk}`;
    const shrunk = shrunkFrom === undefined ? '' : ` (shrunk from ${shrunkFrom})`;
    lines.push(
      `Result: violation. ${property} is violated after ${trace.actions.length} steps${shrunk}${where}:`,
    );
    lines.push(...traceLines(model, trace, property));
    lines.push(written(traceFile!));
  }
  if (result.status !== 'ok' && spec.liveness.length > 0)
    lines.push('Liveness was not checked: it needs every invariant to hold in every reachable state first.');
  return `${lines.join('\n')}\n`;
}

/** npx finds the command in a clone, in a project that installed it, and installed globally. */
const written = (traceFile: string): string =>
  `Trace written to ${traceFile}; replay it with: npx txcheck replay ${traceFile}`;

function livenessLines(
  spec: Spec,
  model: Model<unknown, unknown>,
  result: Result,
  live: LivenessResult,
  files: ReadonlyMap<string, string>,
): string[] {
  const lines = [
    `Liveness: state graph of ${count(live.states)} states and ${count(live.edges)} edges, ${live.seconds.toFixed(2)} s, ${(live.bytes / 2 ** 20).toFixed(1)} MiB.`,
  ];
  if (live.status === 'incomplete') {
    lines.push(`Result: incomplete. The liveness check stopped at ${live.stoppedBy}; no liveness verdict.`);
    return lines;
  }
  const width = Math.max(...live.verdicts.map((v) => v.property.length));
  for (const { property, goals, lasso } of live.verdicts) {
    const verdict =
      lasso === undefined
        ? `holds (${goals} goal${goals === 1 ? '' : 's'})`
        : `fails: ${lasso.goal}, trace ${files.get(property)}`;
    lines.push(`  ${property.padEnd(width)}  ${verdict}`);
  }
  const failed = live.verdicts.find((v) => v.lasso !== undefined);
  if (failed === undefined) {
    const invariants =
      spec.properties.length === 0
        ? 'No invariant is checked'
        : `${spec.properties.join(' and ')} hold${spec.properties.length === 1 ? 's' : ''}`;
    lines.push(
      `Result: ok. ${invariants} in all ${count(result.distinctStates)} reachable states, and ${spec.liveness.join(' and ')} on every fair run.`,
    );
    return lines;
  }
  const lasso = failed.lasso!;
  const goal = `${lasso.goal}${lasso.goal === failed.property ? '' : ` (${failed.property})`}`;
  const run = spec.fairness.length === 0 ? 'a run (no fairness assumed)' : 'a fair run';
  lines.push(
    `Result: violation. ${goal} fails on ${run}: ${lasso.loop} steps to a cycle that it repeats forever:`,
  );
  lines.push(...traceLines(model, lasso, failed.property));
  const file = files.get(failed.property);
  lines.push(written(file!));
  return lines;
}

/**
 * Each step of `trace`: the action, then the variables it changed (all of them at step 0). A
 * lasso marks where its trigger held and where its cycle starts, and says how the cycle closes.
 */
function traceLines(model: Model<unknown, unknown>, trace: Trace | Lasso, property: string): string[] {
  const lines: string[] = [];
  let before: Record<string, unknown> = {};
  const lasso = 'loop' in trace ? trace : undefined;
  trace.states.forEach((s, step) => {
    const vars = stateView(model, s);
    const notes: string[] = [];
    if (step === lasso?.trigger)
      notes.push(`${lasso.goal}: its trigger holds; its goal never does from here on`);
    if (step === lasso?.loop) notes.push('the cycle starts here');
    lines.push(
      `  step ${step}: ${step === 0 ? '(initial state)' : trace.actions[step - 1]}${notes.length === 0 ? '' : `   [${notes.join('; ')}]`}`,
    );
    for (const [name, value] of Object.entries(vars)) {
      const shown = JSON.stringify(value);
      if (shown !== JSON.stringify(before[name])) lines.push(`    ${name} = ${shown}`);
    }
    before = vars;
  });
  if (property === DEADLOCK) lines.push('  (no action is enabled in the last state)');
  if (lasso !== undefined) {
    lines.push(
      lasso.loopAction === undefined
        ? `  (no action is enabled in step ${lasso.loop}: the run stays there forever)`
        : `  step ${trace.states.length}: ${lasso.loopAction}   [back to step ${lasso.loop}]`,
    );
  }
  return lines;
}
