// The footprints of footprints.ts, checked on states of seeded random walks of every shipped Kafka
// spec: two enabled actions of independent classes commute and do not disable each other; an
// action outside a disabled class's enablers leaves that class disabled; an action of a class that
// is invisible for a property leaves that property's value as it was, and every part of the state
// the property reads (PROPERTY_READS) as it was. That each property reads only those parts is
// checked on its own, by evaluating it through proxies that record what it reads. The enabled
// actions' keys (for sleep sets) are distinct, and an action found again after an independent step
// keeps its key.
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { deepEqual } from '../../checker/engine/fingerprint.ts';
import { loadSpecFile } from '../../specs/load.ts';
import { benchmarks, shippedSpecFiles } from '../../specs/shipped.ts';
import type { KafkaConfig } from './config.ts';
import { walkStates } from './conformance/harness.ts';
import { actionKey, kafkaIndependence, type PartName, PROPERTY_READS } from './footprints.ts';
import { type Action, enabledActions, step } from './next.ts';
import { LEADER_BASE, type State, TC_NODE } from './state.ts';
import { kafkaProperties } from './properties.ts';

const specs = shippedSpecFiles().filter((f) => f.startsWith('specs/kafka/') && !benchmarks.includes(f));

/** Each named part as the state holds it, written here from state.ts apart from footprints.ts's part numbers. */
const PART: Record<PartName, { readonly of: (s: State) => unknown; readonly paths: RegExp }> = {
  producer: {
    // The ghost FATAL error is set by the step that sets tm to FATAL_ERROR.
    of: (s) => s.producers.map((p) => [p.tm, p.pid, p.epoch, p.request, p.ghostFatalError]),
    paths: /^producers\.\*\.(tm|pid|epoch|request|ghostFatalError)(\.|$)/,
  },
  producerStatus: { of: (s) => s.producers.map((p) => p.status), paths: /^producers\.\*\.status$/ },
  producerExcuses: {
    of: (s) => s.producers.map((p) => p.ghostExcuses),
    paths: /^producers\.\*\.ghostExcuses$/,
  },
  // A client notes its own decisions, answers and records in the ghost history; the coordinator
  // notes what it did to each client transaction (prepared, fenced, expired).
  producerHistory: {
    of: (s) => s.history.map((h) => [h.decision, h.told, h.recordsSent]),
    paths: /^history\.\*\.(decision|told|recordsSent)$/,
  },
  coordinator: {
    of: (s) => [s.coordinator, s.history.map((h) => [h.prepared, h.fenced, h.expired])],
    paths: /^(coordinator(\.|$)|history\.\*\.(prepared|fenced|expired)$)/,
  },
  leader: { of: (s) => s.partitions, paths: /^partitions(\.|$)/ },
  consumer: { of: (s) => s.consumers, paths: /^consumers(\.|$)/ },
  markersInFlight: {
    of: (s) => s.network.filter((ch) => ch.from === TC_NODE && ch.to >= LEADER_BASE),
    paths: /^network(\.|$)/,
  },
};

/** Reads of what never changes in a run: the lists themselves, which id a producer has, whether the app runs. */
const FIXED = /^(producers|producers\.\*|producers\.\*\.txnId|history|history\.\*|group)$/;

/** The fields `holds` reads of `s`, as paths with list positions written "*". */
function pathsRead(holds: (s: State) => boolean, s: State): Set<string> {
  const paths = new Set<string>();
  const wrap = (target: object, path: string): object =>
    new Proxy(target, {
      get(t, key) {
        const value: unknown = Reflect.get(t, key);
        if (typeof key !== 'string' || typeof value === 'function' || key === 'length') return value;
        const at = path === '' ? key : `${path}.${/^\d+$/.test(key) ? '*' : key}`;
        paths.add(at);
        return typeof value === 'object' && value !== null ? wrap(value, at) : value;
      },
    });
  holds(wrap(s, '') as State);
  return paths;
}

const sameAction = (a: Action, b: Action): boolean =>
  a.kind === b.kind && a.actor === b.actor && a.target === b.target && a.conn === b.conn && a.api === b.api;

let independentPairs = 0;
let invisibleSteps = 0;
let narrowedChecked = 0;

describe('Kafka transition classes', () => {
  it.each(specs)('%s: independent actions commute, enablers and visibility over-approximate', (file) => {
    const cfg = loadSpecFile(file).params as KafkaConfig;
    const all = kafkaIndependence(
      cfg,
      kafkaProperties.map((p) => p.name),
    );
    const perProperty = kafkaProperties.map((p) => ({
      property: p,
      independence: kafkaIndependence(cfg, [p.name]),
    }));
    let pairs = 0;
    for (const s of walkStates(cfg, 6, 40, seedrandom(file))) {
      const actions = enabledActions(cfg, s);
      // Sleep sets tell actions apart by their keys: distinct among the enabled ones.
      expect(new Set(actions.map(actionKey)).size).toBe(actions.length);
      const classes = actions.map((a) => all.classOf(a));
      const enabledClasses = new Set(classes);
      const narrowed = all.narrowed.enablers(all.narrowed.key(s));
      const after = actions.map((a) => step(cfg, s, a));
      for (let x = 0; x < actions.length; x++) {
        const afterX = enabledActions(cfg, after[x]!);
        for (let y = 0; y < actions.length; y++) {
          if (classes[x] === classes[y] || all.dependent[classes[x]!]!.includes(classes[y]!)) continue;
          pairs++;
          const b = afterX.find((a) => sameAction(a, actions[y]!));
          expect(b, `${all.names[classes[x]!]} disables ${all.names[classes[y]!]}`).toBeDefined();
          expect(actionKey(b!)).toBe(actionKey(actions[y]!));
          if (x < y)
            expect(
              deepEqual(step(cfg, after[x]!, b!), step(cfg, after[y]!, actions[x]!)),
              `${all.names[classes[x]!]} and ${all.names[classes[y]!]} do not commute`,
            ).toBe(true);
        }
        for (const c of afterX.map((a) => all.classOf(a))) {
          if (enabledClasses.has(c)) continue;
          expect(
            (narrowed[c] ?? all.enablers[c]!).includes(classes[x]!),
            `${all.names[classes[x]!]} enables ${all.names[c]}${narrowed[c] === undefined ? '' : ' (narrowed)'}`,
          ).toBe(true);
        }
        // A narrowed set must hold for every run of steps outside it: such a step leaves the
        // class disabled and a set for it no wider.
        narrowed.forEach((set, c) => {
          if (set === undefined || enabledClasses.has(c) || set.includes(classes[x]!)) return;
          narrowedChecked++;
          const name = `${all.names[classes[x]!]} outside the narrowed enablers of ${all.names[c]}`;
          expect(
            afterX.some((a) => all.classOf(a) === c),
            `${name} enables it`,
          ).toBe(false);
          const next = all.narrowed.enablers(all.narrowed.key(after[x]!))[c];
          expect(
            next?.every((e) => set.includes(e)),
            `${name} widens them`,
          ).toBe(true);
        });
        for (const { property, independence } of perProperty) {
          if (independence.visible[classes[x]!]) continue;
          invisibleSteps++;
          expect(property.holds(after[x]!), `${all.names[classes[x]!]} changes ${property.name}`).toBe(
            property.holds(s),
          );
          for (const part of PROPERTY_READS[property.name]!) {
            expect(
              deepEqual(PART[part].of(after[x]!), PART[part].of(s)),
              `${all.names[classes[x]!]} changes the ${part} ${property.name} reads`,
            ).toBe(true);
          }
        }
      }
    }
    independentPairs += pairs;
  });

  it('met independent pairs and invisible steps on the walks, so the checks above checked something', () => {
    expect(independentPairs).toBeGreaterThan(1000);
    expect(invisibleSteps).toBeGreaterThan(1000);
    expect(narrowedChecked).toBeGreaterThan(100);
  });

  it.each(kafkaProperties.map((p) => [p.name, p] as const))(
    '%s reads only the parts of the state it is said to read',
    (name, property) => {
      const parts = PROPERTY_READS[name]!;
      const unlisted = new Set<string>();
      for (const file of specs) {
        for (const s of walkStates(
          loadSpecFile(file).params as KafkaConfig,
          2,
          40,
          seedrandom(`${file}/reads`),
        )) {
          for (const path of pathsRead((t) => property.holds(t), s))
            if (!FIXED.test(path) && !parts.some((part) => PART[part].paths.test(path))) unlisted.add(path);
        }
      }
      expect([...unlisted]).toEqual([]);
    },
  );

  it('declares every class an action of every shipped spec can take', () => {
    for (const file of specs) {
      const cfg = loadSpecFile(file).params as KafkaConfig;
      const independence = kafkaIndependence(cfg, []);
      for (const s of walkStates(cfg, 4, 40, seedrandom(`${file}/classes`)))
        for (const a of enabledActions(cfg, s)) expect(() => independence.classOf(a)).not.toThrow();
    }
  });
});

// What the classes must leave independent for the reduction to reduce at all, and what they must
// not: steps of different actors on disjoint state are independent, steps on shared state are not.
// Node 1000 is the coordinator, 2000 + q the leader of partition q (with the transform app, the
// last one leads __consumer_offsets). Each case builds its classes anew: they are built on first
// use, and a case that only read another case's classes would not run the code it tests.
describe('Kafka transition classes: steps on disjoint state are independent', () => {
  const base = loadSpecFile('specs/kafka/commit-abort.json').params as KafkaConfig;
  const two: KafkaConfig = {
    ...base,
    transactionalIds: 2,
    instancesPerId: 1,
    partitions: 2,
    consumers: { readCommitted: 1, readUncommitted: 0 },
  };
  // consume-transform-produce, two instances of one transactional.id, one data partition.
  const transform: KafkaConfig = {
    ...base,
    app: 'consume-transform-produce',
    transactionalIds: 1,
    instancesPerId: 2,
    partitions: 1,
  };
  const classes = (cfg: KafkaConfig) => {
    const independence = kafkaIndependence(cfg, ['AtomicCommit']);
    const of = (name: string): number => {
      const c = independence.names.indexOf(name);
      expect(c, name).toBeGreaterThanOrEqual(0);
      return c;
    };
    const dependent = (a: string, b: string): boolean =>
      independence.dependent[of(a)]!.includes(of(b)) || independence.dependent[of(b)]!.includes(of(a));
    return { independence, of, dependent };
  };

  it.each([
    ['two producers deliver to two leaders', 'deliver/0/2000', 'deliver/1/2001'],
    ['a consumer fetches while the coordinator handles a request', 'fetch/0/0', 'deliver/0/1000'],
    ['two transactional ids begin their transactions', 'beginTransaction/0', 'beginTransaction/1'],
    ['a producer sends to one leader while another leader answers a producer', 'send/0/0', 'deliver/1/2001'],
  ])('%s', (_, a, b) => {
    expect(classes(two).dependent(a, b)).toBe(false);
  });

  it.each([
    ['two producers deliver to one leader', 'deliver/0/2000', 'deliver/1/2000'],
    ['a consumer fetches from the leader that appends', 'fetch/0/0', 'deliver/0/2000'],
    ['a producer sends and then takes its own answer', 'send/0/0', 'deliver/2000/0'],
  ])('%s: dependent', (_, a, b) => {
    expect(classes(two).dependent(a, b)).toBe(true);
  });

  it.each([
    // KIP-447: a member that joins moves the group to a new generation, which the group
    // coordinator checks a TxnOffsetCommit against.
    [
      'a new instance joins the group while the other commits offsets',
      'initTransactions/1',
      'deliver/0/2001',
    ],
    // The committed offsets a client fetches are what the group coordinator appends.
    [
      'a client fetches the committed offsets the group coordinator appends',
      'fetchOffsets/0',
      'deliver/1/2001',
    ],
  ])('with the transform app, %s: dependent', (_, a, b) => {
    expect(classes(transform).dependent(a, b)).toBe(true);
  });

  it('with the transform app, the group coordinator can enable a fetch of committed offsets', () => {
    const { independence, of } = classes(transform);
    expect(independence.enablers[of('fetchOffsets/0')]).toContain(of('deliver/1/2001'));
  });

  it('a step at one leader cannot enable a fetch from another', () => {
    const { independence, of } = classes(two);
    expect(independence.enablers[of('fetch/0/1')]).not.toContain(of('deliver/0/2000'));
    expect(independence.enablers[of('fetch/0/1')]).toContain(of('deliver/0/2001'));
  });

  it('is visible for AtomicCommit where it changes a leader, invisible where it changes only a client', () => {
    const { independence, of } = classes(two);
    expect(independence.visible[of('deliver/0/2000')]).toBe(true);
    expect(independence.visible[of('beginTransaction/0')]).toBe(false);
    expect(independence.visible[of('fetch/0/0')]).toBe(false);
  });
});

describe('action keys', () => {
  const largest = { kind: 62, actor: 8190, target: 8190, conn: 32766, api: 62 } as unknown as Action;
  it('give each field its own bits, up to the largest safe integer', () => {
    expect(actionKey(largest)).toBe(Number.MAX_SAFE_INTEGER);
    const lowest = { kind: -1, actor: -1, target: -1, conn: -1, api: -1 } as unknown as Action;
    expect(actionKey(lowest)).toBe(0);
    // One step in any field moves the key, and differently for each field.
    const moved = (['kind', 'actor', 'target', 'conn', 'api'] as const).map((f) =>
      actionKey({ ...largest, [f]: largest[f] - 1 }),
    );
    expect(new Set(moved).size).toBe(5);
  });

  it('refuse a field past its bits rather than share a key', () => {
    expect(() => actionKey({ ...largest, conn: 32767 })).toThrow(RangeError);
    expect(() => actionKey({ ...largest, actor: -2 })).toThrow(RangeError);
  });
});
