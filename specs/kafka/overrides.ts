// Loading a user-defined variant: a TypeScript (or JavaScript) file that exports `overrides`, the
// brokers' handlers by Kafka API name that replace the defaults, and/or `clientOverrides`, the
// client's reactions that replace the Java client's. Every problem is one InputError line.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ClientHandlers,
  type RequestHandlers,
  clientReactions,
  requestApis,
} from '../../model/kafka/config.ts';
import { defaultClientHandlers, defaultHandlers } from '../../model/kafka/handlers.ts';
import { type Fields, InputError } from '../../checker/engine/input.ts';

/** The line of an error that says what is wrong, and where when it says so (esbuild's "file:line:column: ERROR: ..."). */
function firstLine(e: unknown): string {
  const lines = (e instanceof Error ? e.message : String(e)).split('\n');
  return lines.find((line) => /:\d+:\d+: /.test(line)) ?? lines[0]!;
}

const require = createRequire(import.meta.url);

/**
 * A JavaScript variant loads with Node alone (an ES module through require, Node 20.19 on). A
 * TypeScript one needs tsx, a development dependency that an installed txcheck lacks: it is
 * looked for beside txcheck, then in the working directory, only when such a file is named.
 */
function loadVariant(absolute: string): unknown {
  if (!/\.[cm]?ts$/.test(absolute)) return require(absolute);
  let tsx: string;
  try {
    tsx = require.resolve('tsx/cjs/api', { paths: [dirname(fileURLToPath(import.meta.url)), process.cwd()] });
  } catch {
    throw new Error(
      'a TypeScript variant file needs tsx (npm install tsx), or write the variant in JavaScript (.js, .mjs)',
    );
  }
  return (require(tsx) as typeof import('tsx/cjs/api')).require(absolute, import.meta.url);
}

/** Reads the file named by `fields`' field `name` (a path relative to the working directory). */
export function loadOverrides(
  fields: Fields,
  name: string,
): { handlers: RequestHandlers; clientHandlers: ClientHandlers } {
  const path = fields.string(name);
  const field = fields.fieldName(name);
  const absolute = resolve(path);
  if (!existsSync(absolute))
    throw new InputError(
      fields.file,
      field,
      'the path of a variant file (relative to the working directory)',
      JSON.stringify(path),
    );
  let module: Record<string, unknown>;
  try {
    module = loadVariant(absolute) as Record<string, unknown>;
  } catch (e) {
    throw new InputError(fields.file, field, `a variant file that loads`, `${path}: ${firstLine(e)}`);
  }
  const { overrides, clientOverrides } = module;
  const isTable = (v: unknown): v is object => typeof v === 'object' && v !== null;
  if (!isTable(overrides) && !isTable(clientOverrides)) {
    throw new InputError(
      fields.file,
      field,
      `a file exporting "overrides", an object of handlers by API name (${requestApis.join(', ')}), or "clientOverrides", an object of client reactions (${clientReactions.join(', ')})`,
      path,
    );
  }
  const at = `${field} (${path})`;
  return {
    handlers: isTable(overrides)
      ? withOverrides(
          fields.file,
          at,
          defaultHandlers,
          overrides,
          requestApis,
          'a function (ctx, state, connection, request) => state',
        )
      : defaultHandlers,
    clientHandlers: isTable(clientOverrides)
      ? withOverrides(
          fields.file,
          `${at}: clientOverrides`,
          defaultClientHandlers,
          clientOverrides,
          clientReactions,
          'a function (ctx, state, producer, answer or partition) => state',
        )
      : defaultClientHandlers,
  };
}

/** `defaults` with each function of `overrides` in its place, guarded; any other name is refused. */
function withOverrides<T extends object>(
  file: string,
  at: string,
  defaults: T,
  overrides: object,
  names: readonly string[],
  shape: string,
): T {
  const table: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [name, handler] of Object.entries(overrides)) {
    if (!names.includes(name))
      throw new InputError(file, at, `handlers named ${names.join(', ')}`, JSON.stringify(name));
    if (typeof handler !== 'function') throw new InputError(file, `${at}: ${name}`, shape, typeof handler);
    table[name] = guarded(file, `${at}: ${name}`, handler as Handler);
  }
  return table as T;
}

/** A broker handler or a client reaction: the context, the state, what it reacts to. */
type Handler = (ctx: unknown, s: unknown, ...args: unknown[]) => unknown;

/** A handler that throws becomes one clear line instead of a stack trace. */
function guarded(file: string, field: string, handler: Handler): Handler {
  return (ctx, s, ...args) => {
    let next;
    try {
      next = handler(ctx, s, ...args);
    } catch (e) {
      throw new InputError(file, field, 'a handler that returns the next state', `it threw: ${firstLine(e)}`);
    }
    const difference = shapeDifference(s, next, 'state');
    if (difference !== undefined)
      throw new InputError(
        file,
        field,
        'a handler that returns the next state, shaped as the state it was given',
        difference,
      );
    return next;
  };
}

const kindOf = (v: unknown): string => (v === null ? 'object' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Where `after` is not shaped like `before`: a field missing, added or of another kind (null
 * stands for an absent object). Items of a list are compared with the item at the same index,
 * or the first, so lists may grow and shrink; a channel's messages are requests or responses,
 * two shapes, so only their kind is compared.
 */
function shapeDifference(before: unknown, after: unknown, path: string): string | undefined {
  const [was, is] = [kindOf(before), kindOf(after)];
  if (was !== is)
    return `${path} is ${is === 'undefined' ? 'missing' : `a value of type ${is}`} where the state has a value of type ${was}`;
  if (is === 'array' && path.endsWith('.messages')) {
    const other = (after as readonly unknown[]).findIndex((m) => kindOf(m) !== 'object' || m === null);
    return other < 0 ? undefined : `${path}[${other}] is not a message`;
  }
  if (is === 'array') {
    const items = before as readonly unknown[];
    for (const [i, item] of (after as readonly unknown[]).entries()) {
      const model = i < items.length ? items[i] : items[0];
      const d = model === undefined ? undefined : shapeDifference(model, item, `${path}[${i}]`);
      if (d !== undefined) return d;
    }
  } else if (is === 'object' && before !== null && after !== null) {
    const [a, b] = [before as Record<string, unknown>, after as Record<string, unknown>];
    for (const key of Object.keys(a)) {
      const d = shapeDifference(a[key], b[key], `${path}.${key}`);
      if (d !== undefined) return d;
    }
    const extra = Object.keys(b).find((key) => !(key in a));
    if (extra !== undefined) return `${path}.${extra} is a field the state does not have`;
  }
  return undefined;
}
