// What `txcheck explore` opens: a spec (start at its initial state) or a trace file (start at
// step 0, with the trace's steps offered as the way forward).
import { isPlainObject, readJsonFile } from '../engine/input.ts';
import { parseTrace } from '../engine/trace.ts';
import { parseSpec } from '../../specs/load.ts';
import type { Model } from '../engine/model.ts';
import type { TraceRenderer } from '../report/renderer.ts';

export interface ExplorerSource {
  readonly model: Model<unknown, unknown>;
  readonly renderer?: TraceRenderer;
  readonly title: string;
  /** What a saved trace records of its origin (spec object, spec file, description). */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly specFile: string;
  /** A trace's labels, when the explorer was opened on one: the page offers them as the way forward. */
  readonly suggested: readonly string[];
  /** Where saved traces go. */
  readonly outDir: string;
}

export function explorerSource(file: string, outDir: string): ExplorerSource {
  const value = readJsonFile(file);
  const trace = isPlainObject(value) && '#meta' in value ? parseTrace(file, value) : undefined;
  const spec =
    trace === undefined ? parseSpec(file, value, '') : parseSpec(file, trace.meta.spec, '#meta.spec');
  return {
    model: spec.entry.build(spec.params, spec.properties),
    ...(spec.entry.render === undefined ? {} : { renderer: spec.entry.render }),
    title:
      trace === undefined
        ? `${file} (model ${spec.entry.name})`
        : `${file}: ${trace.meta.property} (model ${spec.entry.name})`,
    spec: spec.raw,
    specFile: trace === undefined ? file : trace.meta.specFile,
    suggested: trace?.actions ?? [],
    outDir,
  };
}
