// The structure of an ITF trace (Apalache ADR-015), checked before txcheck reads its own
// fields: `#meta`, `params`, `vars`, `states`, `loop` at the top; in each state its `#meta`,
// every variable and nothing but variables and parameters; values are booleans, strings, integers (or {"#bigint": "..."}), lists,
// records, {"#tup"}, {"#set"}, {"#map"} and {"#unserializable"}. There is no null in ITF.
import { InputError, describeValue, isPlainObject } from './input.ts';

const TOP_LEVEL = ['#meta', 'params', 'vars', 'states', 'loop'];

/** Throws an InputError naming the first place where `v` is not an ITF value. */
function checkValue(file: string, path: string, v: unknown): void {
  const fail = (expected: string): never => {
    throw new InputError(file, path, expected, describeValue(v));
  };
  if (typeof v === 'boolean' || typeof v === 'string') return;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v))
      fail('an ITF integer (a JSON integer below 2^53, or {"#bigint": "..."}): ITF has no fractions');
    return;
  }
  if (v === null) return fail('an ITF value: ITF has no null');
  if (Array.isArray(v)) {
    v.forEach((x, i) => checkValue(file, `${path}[${i}]`, x));
    return;
  }
  if (!isPlainObject(v)) return fail('an ITF value');
  const keys = Object.keys(v);
  const tag = keys.find((k) => k.startsWith('#'));
  if (tag === undefined) {
    for (const k of keys) checkValue(file, `${path}.${k}`, v[k]);
    return;
  }
  if (keys.length !== 1) fail(`an object with "${tag}" alone`);
  const inner = v[tag];
  const at = `${path}.${tag}`;
  switch (tag) {
    case '#bigint':
      if (typeof inner !== 'string' || !/^-?\d+$/.test(inner))
        throw new InputError(file, at, 'a string of decimal digits', describeValue(inner));
      return;
    case '#tup':
    case '#set':
      if (!Array.isArray(inner)) throw new InputError(file, at, 'a list of ITF values', describeValue(inner));
      inner.forEach((x, i) => checkValue(file, `${at}[${i}]`, x));
      return;
    case '#map':
      if (!Array.isArray(inner))
        throw new InputError(file, at, 'a list of [key, value] pairs', describeValue(inner));
      inner.forEach((pair, i) => {
        if (!Array.isArray(pair) || pair.length !== 2)
          throw new InputError(file, `${at}[${i}]`, 'a [key, value] pair', describeValue(pair));
        checkValue(file, `${at}[${i}][0]`, pair[0]);
        checkValue(file, `${at}[${i}][1]`, pair[1]);
      });
      return;
    case '#unserializable':
      if (typeof inner !== 'string') throw new InputError(file, at, 'a string', describeValue(inner));
      return;
    default:
      fail('an ITF value (the tags are #bigint, #tup, #set, #map, #unserializable)');
  }
}

/** Checks that `value` is an ITF trace; throws an InputError naming the field that is not. */
export function checkItf(file: string, value: unknown): void {
  if (!isPlainObject(value))
    throw new InputError(file, '', 'an ITF trace (a JSON object)', describeValue(value));
  const extra = Object.keys(value).find((k) => !TOP_LEVEL.includes(k));
  if (extra !== undefined)
    throw new InputError(file, extra, `no such field in an ITF trace (it has ${TOP_LEVEL.join(', ')})`);
  const names = (field: string): string[] => {
    const list = value[field];
    if (!Array.isArray(list) || list.some((x) => typeof x !== 'string'))
      throw new InputError(file, field, 'a list of variable names', describeValue(list));
    return list as string[];
  };
  if ('#meta' in value && !isPlainObject(value['#meta']))
    throw new InputError(file, '#meta', 'a JSON object', describeValue(value['#meta']));
  const params = 'params' in value ? names('params') : [];
  const vars = names('vars');
  const states = value.states;
  if (!Array.isArray(states)) throw new InputError(file, 'states', 'a list of states', describeValue(states));
  states.forEach((state, i) => {
    const path = `states[${i}]`;
    if (!isPlainObject(state)) throw new InputError(file, path, 'a JSON object', describeValue(state));
    if ('#meta' in state && !isPlainObject(state['#meta']))
      throw new InputError(file, `${path}.#meta`, 'a JSON object', describeValue(state['#meta']));
    for (const name of vars) {
      if (!(name in state))
        throw new InputError(
          file,
          `${path}.${name}`,
          `a value (every state has the variables ${vars.join(', ')})`,
        );
      checkValue(file, `${path}.${name}`, state[name]);
    }
    for (const name of params) if (name in state) checkValue(file, `${path}.${name}`, state[name]);
    const unknown = Object.keys(state).find((k) => k !== '#meta' && !vars.includes(k) && !params.includes(k));
    if (unknown !== undefined)
      throw new InputError(file, `${path}.${unknown}`, `no such variable (vars lists ${vars.join(', ')})`);
  });
  if ('loop' in value) {
    const loop = value.loop;
    if (typeof loop !== 'number' || !Number.isInteger(loop) || loop < 0 || loop >= states.length) {
      throw new InputError(
        file,
        'loop',
        `the index of a state, from 0 to ${states.length - 1}`,
        describeValue(loop),
      );
    }
  }
}

const isTagged = (v: unknown, tag: string): v is Record<string, unknown[]> =>
  isPlainObject(v) && Object.keys(v).length === 1 && Array.isArray(v[tag]);

/**
 * A checked ITF value in the form txcheck writes and compares, whoever wrote it (Apalache and
 * Quint write every integer as {"#bigint"}, tuples as {"#tup"}, records of a map type as
 * {"#map"}): integers as numbers ({"#bigint"} only beyond 2^53), tuples as lists, maps whose
 * keys are strings as records. A set stays {"#set": [...]}, which replay compares with the
 * model's list of the same items in any order.
 */
export function fromItf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(fromItf);
  if (!isPlainObject(v)) return v;
  if (typeof v['#bigint'] === 'string' && Object.keys(v).length === 1) {
    const n = Number(v['#bigint']);
    return Number.isSafeInteger(n) ? n : v;
  }
  if (isTagged(v, '#tup')) return v['#tup']!.map(fromItf);
  if (isTagged(v, '#set')) return { '#set': v['#set']!.map(fromItf) };
  if (isTagged(v, '#map')) {
    const pairs = (v['#map'] as [unknown, unknown][]).map(([k, x]) => [fromItf(k), fromItf(x)] as const);
    return pairs.every(([k]) => typeof k === 'string') ? Object.fromEntries(pairs) : { '#map': pairs };
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromItf(x)]));
}
