// A saved trace read back with the spec and model it names, and its report, which show and
// report print.
import { parseSpec, temporalProperties, type Spec } from '../../specs/load.ts';
import type { Model } from '../engine/model.ts';
import { REFEREE_AGREEMENT, type TraceFile, readTraceFile, replay } from '../engine/trace.ts';
import { type Report, buildReport } from '../report/report.ts';
import type { Io } from './io.ts';

/** A trace file with the spec and model it names. */
export function loadTrace(file: string): { trace: TraceFile; spec: Spec; model: Model<unknown, unknown> } {
  const trace = readTraceFile(file);
  const spec = parseSpec(file, trace.meta.spec, '#meta.spec');
  return { trace, spec, model: spec.entry.build(spec.params, spec.properties) };
}

/**
 * The report of a trace that replays: its recorded states are then exactly the model's, so the
 * model's renderer can read them. Undefined (after saying why) when the trace does not replay.
 */
export function reportOf(file: string, io: Io): Report | undefined {
  const { trace, spec, model } = loadTrace(file);
  const { reproduced, message, views } = replay(model, trace, {
    properties: temporalProperties(spec),
    fairness: spec.fairness,
  });
  if (!reproduced) {
    io.err(`${file}: the trace does not replay against its model, so it is not shown: ${message}\n`);
    return undefined;
  }
  const { meta } = trace;
  const known = [...spec.entry.properties, ...(spec.entry.liveness ?? [])].find(
    (p) => p.name === meta.property,
  );
  const last = trace.states.length - 1;
  const cycle =
    trace.loop === undefined
      ? undefined
      : meta.loopAction === undefined
        ? `After step ${last} the run stutters (no fairly required action is left) forever, and ${meta.goal} never holds after step ${meta.trigger}.`
        : `Step ${last + 1}, ${meta.loopAction}, leads back to step ${trace.loop}: steps ${trace.loop} to ${last + 1} repeat forever, and ${meta.goal} never holds after step ${meta.trigger}.`;
  return buildReport({
    traceFile: file,
    specFile: meta.specFile,
    model: spec.entry.name,
    specDescription: spec.description ?? '',
    property: meta.property,
    propertyDescription:
      meta.referee !== undefined
        ? `the model and ${meta.referee} agree on every step`
        : (known?.description ?? 'some action is enabled in every reachable state'),
    states: views ?? trace.states,
    labels: trace.actions,
    renderer: spec.entry.render,
    ...(cycle === undefined ? {} : { cycle }),
    ...(meta.property === REFEREE_AGREEMENT && meta.referee !== undefined && meta.difference !== undefined
      ? {
          referee: {
            name: meta.referee,
            observed: trace.observed ?? [],
            explanation: `At step ${meta.difference.step} they differ in ${meta.difference.what}: the model has ${meta.difference.model}, ${meta.referee} has ${meta.difference.referee}.`,
          },
        }
      : {}),
  });
}
