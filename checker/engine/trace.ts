// Counterexamples on disk in the Informal Trace Format (ITF, Apalache ADR-015), written
// atomically, read back with one-line errors, and replayed against the model.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Fields, InputError, describeValue, isPlainObject, readJsonFile } from './input.ts';
import { deepEqual } from './fingerprint.ts';
import { checkItf, fromItf } from './itf.ts';
import { type Fairness, type Lasso, type TemporalProperty, unfairOnCycle } from './liveness.ts';
import { type Model, itfKindOf } from './model.ts';
import { DEADLOCK, type Trace } from './search.ts';

/** What a trace file says about where it came from. */
export interface TraceMeta {
  /** The tool and version that wrote the trace. */
  readonly tool?: string;
  readonly spec: Readonly<Record<string, unknown>>;
  readonly specFile: string;
  readonly strategy: string;
  readonly seed?: number;
  readonly walk?: number;
  readonly property: string;
  readonly description: string;
  /** Lasso traces: the failing goal, the state where its trigger held, the step closing the cycle. */
  readonly goal?: string;
  readonly trigger?: number;
  readonly loopAction?: string;
  /** Set on a shrunk trace: the length of the trace it was shrunk from. */
  readonly shrunkFrom?: number;
  /** A trace of REFEREE_AGREEMENT: the implementation its steps were run on (say, "Kafka 4.1.1"). */
  readonly referee?: string;
  /** Where and how the referee first answered otherwise than the model. */
  readonly difference?: RefereeDifference;
}

/**
 * The property of a trace whose steps were also run on another implementation (the referee) and
 * whose last step the referee took otherwise than the model. The model alone cannot re-check it:
 * replaying such a trace checks its steps, and the referee's own replay checks the difference.
 */
export const REFEREE_AGREEMENT = 'RefereeAgreement';

export interface RefereeDifference {
  /** The state index of the step where they first differ. */
  readonly step: number;
  /** What differs, in the referee's terms (a field of its answer or of its observed state). */
  readonly what: string;
  readonly model: string;
  readonly referee: string;
}

/** A trace as read from a file: states in their ITF form, without their `#meta`. */
export interface TraceFile {
  readonly file: string;
  readonly meta: TraceMeta;
  readonly vars: readonly string[];
  readonly states: readonly Readonly<Record<string, unknown>>[];
  /** The label of the action leading to `states[i + 1]`. */
  readonly actions: readonly string[];
  /** Lasso traces: the index of the state the last state loops back to. */
  readonly loop?: number;
  /** A trace of REFEREE_AGREEMENT: what the referee did at a state's step, by state index. */
  readonly observed?: readonly (string | undefined)[];
}

/**
 * Plain data as a trace writes it: integers beyond 2^53 as {"#bigint": "..."}, and with `marks`,
 * a list the view marked as a set as {"#set": [...]} and a record marked as a map as {"#map": [[key,
 * value], ...]}; without, those stay the list and the record that reports and replay compare.
 */
function encode(v: unknown, marks: boolean): unknown {
  if (typeof v === 'number')
    return Number.isInteger(v) && !Number.isSafeInteger(v) ? { '#bigint': BigInt(v).toString() } : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  const kind = marks ? itfKindOf(v) : undefined;
  if (Array.isArray(v)) {
    const items = v.map((x) => encode(x, marks));
    return kind === 'set' ? { '#set': items } : items;
  }
  if (isPlainObject(v)) {
    const entries = Object.entries(v).map(([k, x]) => [k, encode(x, marks)]);
    return kind === 'map' ? { '#map': entries } : Object.fromEntries(entries);
  }
  // ITF has no null: a model's view must name an absent value (say, "none").
  throw new TypeError(`not plain data for ITF: ${v === null ? 'null' : typeof v}`);
}

/** A value of a view in ITF, as trace files hold it. */
export function toItfValue(v: unknown): unknown {
  return encode(v, true);
}

/** The model's view of `s` (or `s` itself), an object of variables. */
function viewOf<S>(model: Model<S, unknown>, s: S): Readonly<Record<string, unknown>> {
  const view = model.view === undefined ? s : model.view(s);
  if (!isPlainObject(view)) throw new TypeError('a state (or its view) must be an object of variables');
  return view;
}

/** A state as reports, the explorer and replay read it: its view with sets as lists and maps as records. */
export function stateView<S>(model: Model<S, unknown>, s: S): Readonly<Record<string, unknown>> {
  return encode(viewOf(model, s), false) as Record<string, unknown>;
}

/** A trace, or a lasso whose `loop`, goal, trigger and closing action go into the ITF file. */
export function toItf<S>(
  model: Model<S, unknown>,
  trace: Trace | Lasso,
  meta: TraceMeta,
  observed: readonly (string | undefined)[] = [],
): unknown {
  const lasso =
    'loop' in trace
      ? {
          goal: trace.goal,
          trigger: trace.trigger,
          ...(trace.loopAction === undefined ? {} : { loopAction: trace.loopAction }),
        }
      : {};
  const states = trace.states.map((s, i) => {
    const seen = observed[i] === undefined ? {} : { observed: observed[i] };
    const stateMeta = i === 0 ? { index: 0 } : { index: i, action: trace.actions[i - 1], ...seen };
    return { '#meta': stateMeta, ...(toItfValue(viewOf(model, s as S)) as Record<string, unknown>) };
  });
  return {
    '#meta': {
      format: 'ITF',
      'format-description': 'https://apalache-mc.org/docs/adr/015adr-trace.html',
      ...meta,
      ...lasso,
    },
    vars: Object.keys(viewOf(model, trace.states[0] as S)),
    states,
    ...('loop' in trace ? { loop: trace.loop } : {}),
  };
}

/** Writes `text` to a temporary file beside `path`, then renames it: `path` is never half written. */
export function writeFileAtomic(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(temp, text);
    renameSync(temp, path);
  } catch (e) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The temporary path is not a plain file; the original error says more.
    }
    throw e;
  }
}

/** The trace file's text: ITF, two-space indented. */
export function traceText<S>(
  model: Model<S, unknown>,
  trace: Trace | Lasso,
  meta: TraceMeta,
  observed: readonly (string | undefined)[] = [],
): string {
  return `${JSON.stringify(toItf(model, trace, meta, observed), null, 2)}\n`;
}

export function writeTraceFile<S>(
  path: string,
  model: Model<S, unknown>,
  trace: Trace | Lasso,
  meta: TraceMeta,
  observed: readonly (string | undefined)[] = [],
): void {
  writeFileAtomic(path, traceText(model, trace, meta, observed));
}

/** Checks the structure of a parsed trace file; the spec inside is read by the caller. */
export function parseTrace(file: string, value: unknown): TraceFile {
  checkItf(file, value);
  const top: Fields = Fields.root(file, value);
  const notOurs = 'an ITF trace written by txcheck, whose #meta records the spec that was checked';
  const metaFields: Fields = top.object('#meta') ?? top.fail('#meta', notOurs, undefined);
  const spec = metaFields.raw('spec');
  if (!isPlainObject(spec)) {
    const writer = [metaFields.raw('tool'), metaFields.raw('source'), metaFields.raw('description')].find(
      (x) => typeof x === 'string',
    );
    metaFields.fail(
      'spec',
      `${notOurs}${writer === undefined ? '' : ` (this one says: ${JSON.stringify(writer).slice(0, 60)})`}`,
      spec,
    );
  }
  const strategy = metaFields.string('strategy');
  const meta: TraceMeta = {
    spec,
    specFile: metaFields.string('specFile'),
    strategy,
    ...(metaFields.has('seed') ? { seed: metaFields.int('seed', 0, 2 ** 32 - 1) } : {}),
    ...(metaFields.has('walk') ? { walk: metaFields.int('walk', 0, 2 ** 31 - 1) } : {}),
    property: metaFields.string('property'),
    description: metaFields.string('description', ''),
  };
  const refereeMeta =
    meta.property !== REFEREE_AGREEMENT
      ? {}
      : { referee: metaFields.string('referee'), difference: refereeDifference(metaFields) };
  const vars = top.stringList('vars');
  const rawStates = top.raw('states');
  if (!Array.isArray(rawStates) || rawStates.length === 0)
    top.fail('states', 'a non-empty list of states', rawStates);
  top.raw('params');
  const loop = top.has('loop') ? top.int('loop', 0, rawStates.length - 1) : undefined;
  const lassoMeta =
    loop === undefined
      ? {}
      : {
          goal: metaFields.string('goal'),
          trigger: metaFields.int('trigger', 0, loop),
          ...(metaFields.has('loopAction') ? { loopAction: metaFields.string('loopAction') } : {}),
        };
  top.done();

  const actions: string[] = [];
  const observed: (string | undefined)[] = [];
  const states = rawStates.map((raw, i) => {
    const state: Fields = new Fields(
      file,
      isPlainObject(raw) ? raw : top.fail(`states[${i}]`, 'a JSON object', raw),
      `states[${i}]`,
    );
    const stateMeta = state.object('#meta');
    if (i > 0) {
      if (stateMeta === undefined) state.fail('#meta', 'a JSON object with the action label', undefined);
      actions.push(stateMeta.string('action'));
      if (stateMeta.has('observed')) observed[i] = stateMeta.string('observed');
    }
    const vals: Record<string, unknown> = {};
    for (const name of vars) {
      if (!state.has(name))
        state.fail(name, `a value (every state has the variables ${vars.join(', ')})`, undefined);
      vals[name] = fromItf(state.raw(name));
    }
    state.done();
    return vals;
  });
  return {
    file,
    meta: { ...meta, ...lassoMeta, ...refereeMeta },
    vars,
    states,
    actions,
    ...(loop === undefined ? {} : { loop }),
    ...(observed.length === 0 ? {} : { observed }),
  };
}

function refereeDifference(metaFields: Fields): RefereeDifference {
  const d: Fields =
    metaFields.object('difference') ??
    metaFields.fail('difference', 'the step and field where the referee differs', undefined);
  return {
    step: d.int('step', 1, 2 ** 31 - 1),
    what: d.string('what'),
    model: d.string('model'),
    referee: d.string('referee'),
  };
}

export function readTraceFile(file: string): TraceFile {
  return parseTrace(file, readJsonFile(file));
}

/** The first place where `recorded` and `replayed` differ, as "path: recorded X, replayed Y". */
export function firstDifference(recorded: unknown, replayed: unknown, path: string): string | undefined {
  if (deepEqual(recorded, replayed)) return undefined;
  const differs = () =>
    `${path === '' ? '(the state)' : path}: recorded ${describe(recorded)}, replayed ${describe(replayed)}`;
  // A set recorded as {"#set": [...]} (Apalache, Quint) is the model's list of the same items, in any order.
  if (
    isPlainObject(recorded) &&
    Array.isArray(recorded['#set']) &&
    Object.keys(recorded).length === 1 &&
    Array.isArray(replayed)
  ) {
    const items = [...replayed];
    const unmatched = (recorded['#set'] as unknown[]).findIndex((x) => {
      const at = items.findIndex((y) => firstDifference(x, y, '') === undefined);
      if (at >= 0) items.splice(at, 1);
      return at < 0;
    });
    return unmatched < 0 && items.length === 0 ? undefined : differs();
  }
  if (Array.isArray(recorded) && Array.isArray(replayed)) {
    for (let i = 0; i < Math.min(recorded.length, replayed.length); i++) {
      const d = firstDifference(recorded[i], replayed[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return recorded.length === replayed.length ? undefined : differs();
  }
  if (isPlainObject(recorded) && isPlainObject(replayed)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])].sort();
    for (const key of keys) {
      const d = firstDifference(recorded[key], replayed[key], path === '' ? key : `${path}.${key}`);
      if (d !== undefined) return d;
    }
    // Equal but for the encoding of a set inside.
    return undefined;
  }
  return differs();
}

function describe(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
    ? JSON.stringify(v)
    : (JSON.stringify(v) ?? describeValue(v));
}

/** The initial state of `model` whose view is the trace's first state. */
export function initialStateOf<S>(model: Model<S, unknown>, trace: TraceFile): S | undefined {
  return model
    .init()
    .find((init) => firstDifference(trace.states[0], stateView(model, init), '') === undefined);
}

export interface ReplayResult {
  /** True when every step replays as recorded and the recorded property is violated at the end. */
  readonly reproduced: boolean;
  readonly message: string;
  /** When reproduced: the model's own view of each recorded state (the recorded ones may use other ITF encodings). */
  readonly views?: readonly Readonly<Record<string, unknown>>[];
}

/** What a lasso trace is checked against: the spec's temporal properties and its fairness. */
export interface TemporalSetting<S> {
  readonly properties: readonly TemporalProperty<S>[];
  readonly fairness: readonly Fairness[];
}

/**
 * Re-runs the labelled actions of `trace` from the initial state that equals its first state,
 * comparing every state, then re-checks the recorded property: an invariant on the last state,
 * or for a lasso, that its cycle returns to its first state, is fair, and never meets the goal.
 * Throws InputError when the trace cannot belong to `model`.
 */
export function replay<S, A>(
  model: Model<S, A>,
  trace: TraceFile,
  temporal: TemporalSetting<S> = { properties: [], fairness: [] },
): ReplayResult {
  const { file, meta, states, actions } = trace;
  const lasso =
    trace.loop === undefined ? undefined : temporal.properties.find((p) => p.name === meta.property);
  const property = model.invariants.find((p) => p.name === meta.property);
  if (trace.loop !== undefined && lasso === undefined) {
    const known = temporal.properties.map((p) => p.name).join(', ') || 'none in the spec';
    throw new InputError(
      file,
      '#meta.property',
      `a liveness property of the spec (${known})`,
      describeValue(meta.property),
    );
  }
  const refereeTrace = meta.property === REFEREE_AGREEMENT && trace.loop === undefined;
  if (trace.loop === undefined && property === undefined && meta.property !== DEADLOCK && !refereeTrace) {
    const known = [...model.invariants.map((p) => p.name), DEADLOCK].join(', ');
    throw new InputError(file, '#meta.property', `one of ${known}`, describeValue(meta.property));
  }
  const goal = lasso?.goals.find((g) => g.label === meta.goal);
  if (lasso !== undefined && goal === undefined) {
    throw new InputError(
      file,
      '#meta.goal',
      `one of ${lasso.goals.map((g) => g.label).join(', ')}`,
      describeValue(meta.goal),
    );
  }
  const inits = model.init();
  const modelVars = Object.keys(stateView(model, inits[0]!));
  if (!deepEqual([...modelVars].sort(), [...trace.vars].sort())) {
    throw new InputError(
      file,
      'vars',
      `the variables of the spec's model (${modelVars.join(', ')})`,
      trace.vars.join(', '),
    );
  }
  const diverged = (message: string): ReplayResult => ({ reproduced: false, message });

  let s = initialStateOf(model, trace);
  if (s === undefined)
    return diverged(
      `step 0: no initial state matches; ${firstDifference(states[0], stateView(model, inits[0]!), '')}`,
    );
  const replayed: S[] = [s];
  const taken: A[] = [];
  const take = (step: number, label: string): string | undefined => {
    const enabled = model.actions(s!);
    const action = enabled.find((a) => model.label(a) === label);
    if (action === undefined)
      return `step ${step}: action ${JSON.stringify(label)} is not enabled (enabled: ${enabled.map(model.label).join(', ') || 'none'})`;
    taken.push(action);
    s = model.next(s!, action);
    replayed.push(s);
    return undefined;
  };
  for (let step = 1; step < states.length; step++) {
    const notEnabled = take(step, actions[step - 1]!);
    if (notEnabled !== undefined) return diverged(notEnabled);
    const difference = firstDifference(states[step], stateView(model, s), '');
    if (difference !== undefined) return diverged(`step ${step}: ${difference}`);
  }
  const last = states.length - 1;
  const views = replayed.map((r) => stateView(model, r));
  if (lasso !== undefined && goal !== undefined) {
    const result = replayLoop(model, trace, goal, temporal.fairness, replayed, taken, take);
    return result.reproduced ? { ...result, views } : result;
  }
  if (refereeTrace)
    return {
      reproduced: true,
      message: `all ${last} steps replay as recorded; ${meta.referee} differed at step ${meta.difference!.step} (${meta.difference!.what}), which only a run on it re-checks`,
      views,
    };
  const stillViolated = property === undefined ? model.actions(s).length === 0 : !property.holds(s);
  if (!stillViolated)
    return diverged(
      `all ${last} steps replay as recorded, but ${meta.property} is no longer violated in the last state`,
    );
  return {
    reproduced: true,
    message: `all ${last} steps replay as recorded and ${meta.property} is violated in the last state`,
    views,
  };
}

/** The checks of a lasso once its states replayed: the loop closes, the goal never holds after the trigger, the cycle is fair. */
function replayLoop<S, A>(
  model: Model<S, A>,
  trace: TraceFile,
  goal: TemporalProperty<S>['goals'][number],
  fairness: readonly Fairness[],
  replayed: S[],
  taken: A[],
  take: (step: number, label: string) => string | undefined,
): ReplayResult {
  const { meta, states } = trace;
  const loop = trace.loop!;
  const trigger = meta.trigger ?? 0;
  const last = states.length - 1;
  const diverged = (message: string): ReplayResult => ({ reproduced: false, message });
  if (meta.loopAction === undefined) {
    if (model.actions(replayed[last]!).length > 0)
      return diverged(`the trace stutters in its last state, but actions are enabled there`);
    if (loop !== last)
      return diverged(`a stuttering trace must loop on its last state (${last}), not ${loop}`);
  } else {
    const notEnabled = take(last + 1, meta.loopAction);
    if (notEnabled !== undefined) return diverged(notEnabled);
    const difference = firstDifference(states[loop], stateView(model, replayed[last + 1]!), '');
    if (difference !== undefined) return diverged(`the cycle does not return to step ${loop}: ${difference}`);
  }
  const triggered = goal.kind === 'leadsTo' ? goal.p(replayed[trigger]!) : trigger === 0;
  if (!triggered) return diverged(`${goal.label}: its trigger does not hold at step ${trigger}`);
  const met = replayed.slice(trigger, last + 1).findIndex((x) => goal.q(x));
  if (met !== -1) return diverged(`${goal.label}: the goal holds at step ${trigger + met}`);
  const unfair = unfairOnCycle(model, fairness, replayed.slice(loop, last + 1), taken.slice(loop));
  if (unfair !== undefined) return diverged(`the cycle from step ${loop} is not fair: ${unfair}`);
  const cycle =
    meta.loopAction === undefined ? `stutters in step ${loop}` : `returns from step ${last} to step ${loop}`;
  return {
    reproduced: true,
    message: `all ${last} steps replay as recorded, the cycle ${cycle}, and ${goal.label} never reaches its goal after step ${trigger} on this fair run`,
  };
}
