// `txcheck explore`: a local HTTP server (127.0.0.1 only) that lets a person walk through a model
// in the browser. The page asks the server for the state at the end of a path of action labels;
// the server replays the path, so every answer is the model's own. Bad requests get a JSON error
// and the server keeps running. The model runs on a thread of its own, each answer bounded in
// time (model-thread.ts), so a variant's handler that never returns costs one answer, not the
// server. Any page open in the browser can send requests to 127.0.0.1, so only its own page is
// answered: a request for another Host (DNS rebinding) or from another Origin gets 403, a POST
// must carry JSON (which a foreign page cannot send without the browser asking first), and a
// body past the limit is not read on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type ApiAnswer, API_ROUTES } from './answers.ts';
import { ModelThread } from './model-thread.ts';
import { explorerPage } from './page.ts';

export interface RunningExplorer {
  readonly url: string;
  close(): Promise<void>;
}

export interface ExplorerOptions {
  /** 0 (the default) takes any free port. */
  readonly port?: number;
  /** The most seconds one answer may take: a step, a state, a search (explore --max-seconds). */
  readonly maxSeconds?: number;
}

/** explore's --max-seconds when not given. */
export const DEFAULT_ANSWER_SECONDS = 30;
const MAX_BODY = 1 << 20;

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

/**
 * Serves the explorer for the spec or trace `file` on 127.0.0.1, saving traces under `outDir`.
 * Rejects with the file's bad input before listening, and with the listen error (EADDRINUSE...).
 */
export async function startExplorer(
  file: string,
  outDir: string,
  { port = 0, maxSeconds = DEFAULT_ANSWER_SECONDS }: ExplorerOptions = {},
): Promise<RunningExplorer> {
  const thread = new ModelThread({ file, outDir }, maxSeconds);
  let title: string;
  try {
    const info = await thread.ask('/api/info', {});
    if (info.status !== 200) throw new Error(`explore: ${(info.json as { error: string }).error}`);
    title = (info.json as { title: string }).title;
  } catch (e) {
    await thread.close();
    throw e;
  }

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
    if (!page && !API_ROUTES.includes(url.pathname)) return refuse(res, 404, `no such page: ${url.pathname}`);
    const allowed = page ? 'GET' : 'POST';
    if (req.method !== allowed)
      return refuse(res, 405, `${req.method} not allowed: ${url.pathname} takes ${allowed}`, {
        allow: allowed,
      });
    if (page) return send(res, 200, 'text/html; charset=utf-8', explorerPage(title));
    if (mediaType(req.headers['content-type']) !== 'application/json')
      return refuse(res, 415, 'a POST takes a JSON body: content-type application/json');
    readBody(req)
      .then((body) => thread.ask(url.pathname, body))
      .then(({ status, json }: ApiAnswer) => send(res, status, 'application/json', JSON.stringify(json)))
      .catch((e: unknown) => {
        if (e instanceof TooLarge) return refuse(res, 413, `request body larger than ${MAX_BODY} bytes`);
        const known = e instanceof BadRequest;
        sendError(res, known ? 400 : 500, known ? e.message : `internal error: ${(e as Error).message}`);
      });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) => void thread.close().then(() => reject(e)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address !== null ? address.port : port;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        // The model's thread first: an answer it holds then goes out, and the connection closes.
        close: async () => {
          await thread.close();
          const closed = new Promise<void>((done) => server.close(() => done()));
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}
