// `txcheck explore`: a local HTTP server (127.0.0.1 only) that lets a person walk through a model
// in the browser. The page asks the server for the state at the end of a path of action labels;
// the server replays the path, so every answer is the model's own. Bad requests get a JSON error
// and the server keeps running.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Model } from '../engine/model.ts';
import { type TraceMeta, writeTraceFile } from '../engine/trace.ts';
import type { TraceRenderer } from '../report/renderer.ts';
import { TOOL } from '../version.ts';
import { explorerPage } from './page.ts';
import { PathError, describeState, searchFrom, walk } from './session.ts';

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

export interface RunningExplorer {
  readonly url: string;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
const SEARCH_STATES = 200_000;

class BadRequest extends Error {}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY) reject(new BadRequest('request body too large'));
    });
    req.on('end', () => {
      try {
        resolve(body === '' ? {} : JSON.parse(body));
      } catch {
        reject(new BadRequest('request body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** The "path" field of a request: a list of action labels. */
function pathOf(body: unknown): string[] {
  const path = (body as { path?: unknown } | null)?.path;
  if (!Array.isArray(path) || !path.every((x) => typeof x === 'string'))
    throw new BadRequest('path: expected a list of action labels');
  return path;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** A file name under `dir` that does not exist yet. */
function freshName(dir: string): string {
  for (let n = 1; ; n++) {
    const file = join(dir, `explore-${n}.itf.json`);
    if (!existsSync(file)) return file;
  }
}

export function startExplorer(source: ExplorerSource, port = 0): Promise<RunningExplorer> {
  const { model, renderer } = source;
  const handlers: Record<string, (body: unknown) => unknown> = {
    '/api/info': () => ({
      title: source.title,
      tool: TOOL,
      suggested: source.suggested,
      properties: model.invariants.map((p) => p.name),
    }),
    '/api/state': (body) => describeState(model, renderer, walk(model, pathOf(body))),
    '/api/search': (body) => {
      const path = pathOf(body);
      const explored = walk(model, path);
      const found = searchFrom(model, explored.states[explored.states.length - 1], SEARCH_STATES);
      return found === null
        ? { found: false, bound: SEARCH_STATES }
        : { found: true, property: found.property, path: [...path, ...found.labels] };
    },
    '/api/save': (body) => {
      const path = pathOf(body);
      const explored = walk(model, path);
      const last = explored.states[explored.states.length - 1];
      const broken = model.invariants.find((p) => !p.holds(last));
      if (broken === undefined)
        throw new BadRequest(
          'save: no property is violated at the end of this path, so replay would have nothing to reproduce',
        );
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
    },
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/')
      return send(res, 200, 'text/html; charset=utf-8', explorerPage(source.title));
    const handler = handlers[url.pathname];
    if (handler === undefined)
      return send(res, 404, 'application/json', JSON.stringify({ error: `no such page: ${url.pathname}` }));
    readBody(req)
      .then((body) => send(res, 200, 'application/json', JSON.stringify(handler(body))))
      .catch((e: unknown) => {
        const known = e instanceof BadRequest || e instanceof PathError;
        send(
          res,
          known ? 400 : 500,
          'application/json',
          JSON.stringify({ error: known ? e.message : `internal error: ${(e as Error).message}` }),
        );
      });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address !== null ? address.port : port;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
