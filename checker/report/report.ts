// A counterexample as a list of readable steps, built from the states a trace records. The
// engine part is generic (labels and changed fields); a model may plug in a TraceRenderer that
// says what each step means in its own terms, what to draw, and why the property broke.
import { isPlainObject } from '../engine/input.ts';
import { deepEqual } from '../engine/fingerprint.ts';
import { DEADLOCK } from '../engine/search.ts';
import type { Explanation, StepMeaning, Table, TraceRenderer, View } from './renderer.ts';

export interface FieldChange {
  readonly path: string;
  /** JSON of the value before and after; absent when the field did not exist. */
  readonly before?: string;
  readonly after?: string;
}

export interface ReportStep extends StepMeaning {
  /** 0 is the initial state. */
  readonly step: number;
  /** The model's action label ('' at step 0). */
  readonly label: string;
  readonly diff: readonly FieldChange[];
  readonly tables: readonly Table[];
}

export interface Report {
  readonly title: string;
  readonly property: string;
  readonly propertyDescription: string;
  readonly explanation: Explanation;
  readonly source: {
    readonly traceFile: string;
    readonly specFile: string;
    readonly model: string;
    readonly description: string;
  };
  readonly participants: readonly string[];
  readonly steps: readonly ReportStep[];
  /** A lasso (liveness) trace: how the run repeats forever after its last step. */
  readonly cycle?: string;
}

export interface ReportInput {
  readonly traceFile: string;
  readonly specFile: string;
  readonly model: string;
  readonly specDescription: string;
  readonly property: string;
  readonly propertyDescription: string;
  readonly states: readonly View[];
  readonly labels: readonly string[];
  readonly renderer?: TraceRenderer;
  readonly cycle?: string;
  /** A trace run on a referee: its name, what it did at each state's step, and why they differ. */
  readonly referee?: {
    readonly name: string;
    readonly observed: readonly (string | undefined)[];
    readonly explanation: string;
  };
}

const MAX_VALUE = 160;

function shown(v: unknown): string {
  const text = JSON.stringify(v);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 3)}...` : text;
}

/** The leaf fields that differ between two values, as paths; appended list items count as new fields. */
export function diffFields(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (deepEqual(before, after)) return [];
  const at = (key: string | number) =>
    typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: FieldChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i >= before.length) out.push({ path: at(i), after: shown(after[i]) });
      else if (i >= after.length) out.push({ path: at(i), before: shown(before[i]) });
      else out.push(...diffFields(before[i], after[i], at(i)));
    }
    return out;
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    const out: FieldChange[] = [];
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (!(key in after)) out.push({ path: at(key), before: shown(before[key]) });
      else if (!(key in before)) out.push({ path: at(key), after: shown(after[key]) });
      else out.push(...diffFields(before[key], after[key], at(key)));
    }
    return out;
  }
  return [{ path: path === '' ? '(the state)' : path, before: shown(before), after: shown(after) }];
}

export function describeChange(c: FieldChange): string {
  return `${c.path}: ${c.before ?? '(none)'} → ${c.after ?? '(none)'}`;
}

const GENERIC_LIFELINE = 'system';

/** Without a model renderer: the label is the action; changed fields are the changes. */
function genericMeaning(label: string, diff: readonly FieldChange[]): StepMeaning {
  return {
    actor: '',
    action: label,
    changes: diff.map(describeChange),
    events: [{ kind: 'note', over: GENERIC_LIFELINE, text: label, fault: false }],
  };
}

export function buildReport(input: ReportInput): Report {
  const { states, labels, renderer, property } = input;
  const meanings = renderer?.steps(states, labels);
  const steps: ReportStep[] = states.map((state, i) => {
    const diff = i === 0 ? [] : diffFields(states[i - 1], state);
    const meaning =
      i === 0
        ? { actor: '', action: '(initial state)', changes: [], events: [] }
        : (meanings?.[i - 1] ?? genericMeaning(labels[i - 1]!, diff));
    const observed = input.referee?.observed[i];
    return {
      step: i,
      label: i === 0 ? '' : labels[i - 1]!,
      ...meaning,
      ...(observed === undefined
        ? {}
        : { changes: [...meaning.changes, `${input.referee!.name}: ${observed}`] }),
      diff,
      tables: renderer?.tables(state) ?? [],
    };
  });
  const named = new Set(
    steps.flatMap((s) => s.events.flatMap((e) => (e.kind === 'note' ? [e.over] : [e.from, e.to]))),
  );
  const explained =
    input.referee === undefined
      ? renderer?.explain(property, states, labels)
      : { text: input.referee.explanation, over: [] };
  const participants =
    renderer === undefined
      ? [GENERIC_LIFELINE]
      : renderer.participants(states).filter((p) => named.has(p) || explained?.over.includes(p));
  const last = states.length - 1;
  const fallback =
    property === DEADLOCK
      ? `No action is enabled in the state after step ${last}.`
      : input.cycle !== undefined
        ? `${property} (${input.propertyDescription}) fails on this run, which goes on forever without meeting its goal.`
        : `${property} (${input.propertyDescription}) does not hold in the state after step ${last}.`;
  const explanation = explained ?? { text: fallback, over: participants.slice(0, 1) };
  return {
    title:
      input.cycle === undefined
        ? `${property} violated after ${last} steps`
        : `${property} fails on a run of ${last} steps that then repeats forever`,
    property,
    propertyDescription: input.propertyDescription,
    explanation,
    source: {
      traceFile: input.traceFile,
      specFile: input.specFile,
      model: input.model,
      description: input.specDescription,
    },
    participants: participants.length > 0 ? participants : [GENERIC_LIFELINE],
    steps,
    ...(input.cycle === undefined ? {} : { cycle: input.cycle }),
  };
}

/** Whether table `id` differs from the one at the step before. */
export function tableChanged(report: Report, step: number, id: string): boolean {
  if (step === 0) return false;
  const find = (s: number) => report.steps[s]!.tables.find((t) => t.id === id);
  return !deepEqual(find(step), find(step - 1));
}
