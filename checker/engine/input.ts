// Reading untrusted JSON (spec files, trace files) field by field. Every failure is one line
// naming the file, the field and what was expected.
import { readFileSync, statSync } from 'node:fs';

export class InputError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly expected: string,
    readonly got?: string,
  ) {
    super(
      `${file}: ${field === '' ? '(top level)' : field}: expected ${expected}${got === undefined ? '' : `, got ${got}`}`,
    );
    this.name = 'InputError';
  }
}

/** A short, one-line rendering of an offending value for error messages. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  // JSON reads 1e400 as Infinity, which JSON.stringify would show as null.
  if (typeof v === 'number' && !Number.isFinite(v))
    return 'a number beyond the largest double (such as 1e400)';
  const text = JSON.stringify(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads the fields of one JSON object; `done()` rejects any field nobody asked for. */
export class Fields {
  private readonly seen = new Set<string>();
  /** Every field name asked about, read or not: what an unknown field's message lists. */
  private readonly known = new Set<string>();

  constructor(
    readonly file: string,
    private readonly obj: Readonly<Record<string, unknown>>,
    readonly path = '',
  ) {}

  static root(file: string, value: unknown): Fields {
    if (!isPlainObject(value)) throw new InputError(file, '', 'a JSON object', describeValue(value));
    return new Fields(file, value);
  }

  fieldName(name: string): string {
    return this.path === '' ? name : `${this.path}.${name}`;
  }

  fail(name: string, expected: string, value?: unknown): never {
    throw new InputError(
      this.file,
      this.fieldName(name),
      expected,
      arguments.length > 2 ? describeValue(value) : undefined,
    );
  }

  has(name: string): boolean {
    this.known.add(name);
    return Object.prototype.hasOwnProperty.call(this.obj, name);
  }

  raw(name: string): unknown {
    this.seen.add(name);
    this.known.add(name);
    return this.has(name) ? this.obj[name] : undefined;
  }

  int(name: string, min: number, max: number, fallback?: number): number {
    const v = this.raw(name);
    const expected = `an integer from ${min} to ${max}`;
    if (v === undefined) return fallback ?? this.fail(name, expected, v);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(name, expected, v);
    return v;
  }

  bool(name: string, fallback?: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return fallback ?? this.fail(name, 'true or false', v);
    if (typeof v !== 'boolean') this.fail(name, 'true or false', v);
    return v;
  }

  string(name: string, fallback?: string): string {
    const v = this.raw(name);
    if (v === undefined) return fallback ?? this.fail(name, 'a string', v);
    if (typeof v !== 'string' || v === '') this.fail(name, 'a non-empty string', v);
    return v;
  }

  oneOf<T extends string>(name: string, options: readonly T[], fallback?: T): T {
    const v = this.raw(name);
    const expected = `one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
    if (v === undefined) return fallback ?? this.fail(name, expected, v);
    if (typeof v !== 'string' || !(options as readonly string[]).includes(v)) this.fail(name, expected, v);
    return v as T;
  }

  /** A list of distinct strings, each one of `options` when given. */
  stringList<T extends string>(name: string, options?: readonly T[], fallback?: readonly T[]): readonly T[] {
    const v = this.raw(name);
    const expected =
      options === undefined ? 'a list of strings' : `a list of names from ${options.join(', ')}`;
    if (v === undefined) return fallback ?? this.fail(name, expected, v);
    if (!Array.isArray(v)) this.fail(name, expected, v);
    v.forEach((item, i) => {
      if (
        typeof item !== 'string' ||
        (options !== undefined && !(options as readonly string[]).includes(item))
      ) {
        this.fail(`${name}[${i}]`, options === undefined ? 'a string' : `one of ${options.join(', ')}`, item);
      }
      if (v.indexOf(item) !== i) this.fail(`${name}[${i}]`, 'a name not listed before', item);
    });
    return v as T[];
  }

  /** A nested object, or undefined when absent. */
  object(name: string): Fields | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) this.fail(name, 'a JSON object', v);
    return new Fields(this.file, v, this.fieldName(name));
  }

  /** Rejects fields that were never read. */
  done(): void {
    for (const key of Object.keys(this.obj)) {
      if (!this.seen.has(key)) {
        const known = [...this.known].sort().join(', ');
        throw new InputError(this.file, this.fieldName(key), `no such field (known: ${known})`);
      }
    }
  }
}

/** Reads and parses a JSON file; a missing file or bad JSON is one InputError line. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    // Reading a FIFO or a device would wait for a writer, or never end.
    const stat = statSync(file);
    if (!stat.isFile())
      throw new InputError(
        file,
        '',
        'a regular file',
        stat.isDirectory() ? 'a folder' : stat.isFIFO() ? 'a FIFO' : 'a device or socket',
      );
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(file, '', 'a readable file', (e as NodeJS.ErrnoException).code ?? String(e));
  }
  try {
    // A byte order mark is not JSON, but editors write one.
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new InputError(file, '', 'valid JSON', (e as Error).message.split('\n')[0]);
  }
}
