// `txcheck explore`: a local HTTP server (127.0.0.1 only) that lets a person walk through a model
// in the browser. The page asks the server for the state at the end of a path of action labels;
// the server replays the path, so every answer is the model's own. Bad requests get a JSON error
// and the server keeps running. Any page open in the browser can send requests to 127.0.0.1, so
// only its own page is answered: a request for another Host (DNS rebinding) or from another
// Origin gets 403, a POST must carry JSON (which a foreign page cannot send without the
// browser asking first), and a body past the limit is not read on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdirSync } from 'node:fs';
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
class TooLarge extends Error {}

/** The request's JSON body; past MAX_BODY bytes it stops reading and rejects with TooLarge. */
function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return reject(new TooLarge());
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length <= MAX_BODY) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      reject(new TooLarge());
    };
    req.on('data', onData);
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
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

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  res.end(body);
}

const sendError = (
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
) => send(res, status, 'application/json', JSON.stringify({ error }), headers);

/** An answer before the request's body is read: the connection closes after it rather than read the body on. */
const refuse = (res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) =>
  sendError(res, status, error, { ...headers, connection: 'close' });

/** The media type of a content-type header, without its parameters. */
const mediaType = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

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
    },
  };

  const server: Server = createServer((req, res) => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const { host, origin } = req.headers;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      return refuse(res, 403, `forbidden: Host ${JSON.stringify(host ?? '')} is not this explorer's`);
    if (
      origin !== undefined &&
      origin !== `http://127.0.0.1:${port}` &&
      origin !== `http://localhost:${port}`
    )
      return refuse(res, 403, `forbidden: Origin ${JSON.stringify(origin)} is not this explorer's page`);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const page = url.pathname === '/';
    const handler = handlers[url.pathname];
    if (!page && handler === undefined) return refuse(res, 404, `no such page: ${url.pathname}`);
    const allowed = page ? 'GET' : 'POST';
    if (req.method !== allowed)
      return refuse(res, 405, `${req.method} not allowed: ${url.pathname} takes ${allowed}`, {
        allow: allowed,
      });
    if (page) return send(res, 200, 'text/html; charset=utf-8', explorerPage(source.title));
    if (mediaType(req.headers['content-type']) !== 'application/json')
      return refuse(res, 415, 'a POST takes a JSON body: content-type application/json');
    readBody(req)
      .then((body) => send(res, 200, 'application/json', JSON.stringify(handler!(body))))
      .catch((e: unknown) => {
        if (e instanceof TooLarge) return refuse(res, 413, `request body larger than ${MAX_BODY} bytes`);
        const known = e instanceof BadRequest || e instanceof PathError;
        sendError(res, known ? 400 : 500, known ? e.message : `internal error: ${(e as Error).message}`);
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
