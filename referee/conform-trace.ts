// A walk on which a broker differed from the model, as a trace file's content: the model's states
// (its broker work after each step, as one broker did it), what the broker did at each step, and
// the first difference. `show` and `report` render it; `replay --kafka` runs it again.
import type { Trace } from '../checker/engine/search.ts';
import type { RefereeDifference } from '../checker/engine/trace.ts';
import type { KafkaConfig } from '../model/kafka/config.ts';
import { initialState } from '../model/kafka/index.ts';
import type { StepResult } from './replay/replay.ts';
import { type Referee, walkTrace } from './replay/walk.ts';

export interface ConformTrace {
  readonly trace: Trace;
  /** By state index: what the broker did at that step. */
  readonly observed: readonly (string | undefined)[];
  readonly difference: RefereeDifference;
}

/** A value as the trace keeps it; a side that did nothing (a marker never sent) says so. */
const shown = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined ? 'nothing' : JSON.stringify(v);

export function conformTrace(
  cfg: KafkaConfig,
  labels: readonly string[],
  results: readonly StepResult[],
  referee: Referee = 'broker',
): ConformTrace {
  const states: unknown[] = [initialState(cfg)];
  const actions: string[] = [];
  const observed: (string | undefined)[] = [];
  let difference: RefereeDifference | undefined;
  for (const st of walkTrace(cfg, labels, referee).steps) {
    if (difference !== undefined) break;
    const result = results.find((r) => r.index === st.index);
    for (const [k, taken] of [...(st.taken === undefined ? [] : [st.taken]), ...st.broker].entries()) {
      states.push(taken.after);
      actions.push(taken.label);
      if (k === 0 && result !== undefined && result.did !== 'client only')
        observed[states.length - 1] = result.did;
    }
    if (result?.difference !== undefined)
      difference = {
        step: states.length - 1,
        what: result.difference.what,
        model: shown(result.difference.model),
        referee: shown(result.difference.kafka),
      };
  }
  if (difference === undefined) throw new Error('conformTrace: the walk has no difference');
  return { trace: { states, actions }, observed, difference };
}
