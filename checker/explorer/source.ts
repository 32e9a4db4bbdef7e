// What `txcheck explore` opens: a spec (start at its initial state) or a trace file (start at
// step 0, with the trace's steps offered as the way forward).
import { isPlainObject, readJsonFile } from '../engine/input.ts';
import { parseTrace } from '../engine/trace.ts';
import { parseSpec } from '../../specs/load.ts';
import type { ExplorerSource } from './server.ts';

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
