// What the explorer's API answers, computed on the model's own thread (explorer-worker.ts): a
// step of the model that never returns (a variant's handler that loops) then holds that thread
// alone, which the server ends at its bound, and never the server itself.
import { mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../engine/input.ts';
import { type TraceMeta, writeTraceFile } from '../engine/trace.ts';
import { TOOL } from '../version.ts';
import type { ExplorerSource } from './source.ts';
import { PathError, describeState, searchFrom, walk } from './session.ts';

/** The most distinct states a search from the page explores. */
export const SEARCH_STATES = 200_000;

/** One API call, as the server passes it to the model's thread. */
export interface ApiRequest {
  readonly route: string;
  readonly body: unknown;
  /** The most seconds a search may take (explore --max-seconds). */
  readonly maxSeconds: number;
}

/** The HTTP status and the JSON body of an answer. */
export interface ApiAnswer {
  readonly status: number;
  readonly json: unknown;
}

export const API_ROUTES: readonly string[] = ['/api/info', '/api/state', '/api/search', '/api/save'];

class BadRequest extends Error {}

/** The "path" field of a request: a list of action labels. */
function pathOf(body: unknown): string[] {
  const path = (body as { path?: unknown } | null)?.path;
  if (!Array.isArray(path) || !path.every((x) => typeof x === 'string'))
    throw new BadRequest('path: expected a list of action labels');
  return path;
}

/** A file name under `dir` that does not exist yet. */
function freshName(dir: string): string {
  for (let n = 1; ; n++) {
    const file = join(dir, `explore-${n}.itf.json`);
    if (!existsSync(file)) return file;
  }
}

function compute(source: ExplorerSource, { route, body, maxSeconds }: ApiRequest): unknown {
  const { model, renderer } = source;
  switch (route) {
    case '/api/info':
      return {
        title: source.title,
        tool: TOOL,
        suggested: source.suggested,
        properties: model.invariants.map((p) => p.name),
      };
    case '/api/state':
      return describeState(model, renderer, walk(model, pathOf(body)));
    case '/api/search': {
      const path = pathOf(body);
      const explored = walk(model, path);
      const found = searchFrom(model, explored.states[explored.states.length - 1], SEARCH_STATES, maxSeconds);
      return 'labels' in found
        ? { found: true, property: found.property, path: [...path, ...found.labels] }
        : { found: false, bound: SEARCH_STATES, ...found };
    }
    case '/api/save': {
      const path = pathOf(body);
      const explored = walk(model, path);
      const last = explored.states[explored.states.length - 1];
      const broken = model.invariants.find((p) => !p.holds(last));
      if (broken === undefined)
        throw new BadRequest(
          'save: no property is violated at the end of this path, so replay would have nothing to reproduce',
        );
      mkdirSync(source.outDir, { recursive: true });
      const file = freshName(source.outDir);
      const meta: TraceMeta = {
        tool: TOOL,
        spec: source.spec,
        specFile: source.specFile,
        strategy: 'explore',
        property: broken.name,
        description: `${broken.name} violated after ${path.length} steps, found by hand in the explorer (${source.specFile})`,
      };
      writeTraceFile(file, model, { states: explored.states, actions: path }, meta);
      return { saved: file, property: broken.name };
    }
    default:
      throw new BadRequest(`no such page: ${route}`);
  }
}

/** The answer to `request`: 400 for a request (or a variant's handler) at fault, 500 for a bug. */
export function answer(source: ExplorerSource, request: ApiRequest): ApiAnswer {
  try {
    return { status: 200, json: compute(source, request) };
  } catch (e) {
    const known = e instanceof BadRequest || e instanceof PathError || e instanceof InputError;
    const message = e instanceof Error ? e.message : String(e);
    return { status: known ? 400 : 500, json: { error: known ? message : `internal error: ${message}` } };
  }
}
