// What each step may read and write, for partial-order reduction. The state is cut into parts
// (a producer's client state, its connections, its instance status, its ghost excuses, its ghost
// history; the coordinator; a partition's leader; a consumer; a channel between two nodes; a fault
// budget...), and every step is put in a transition class whose footprint names the parts it
// touches. Channels are FIFO: taking the head and appending at the tail of a non-empty channel
// commute, so only a look inside a channel (is a marker on its way?) conflicts with both.
// Over-approximate everywhere: a part wrongly left out can hide a state; one too many only costs
// reduction. footprints.test.ts checks the claims on reachable states.
import type { Independence } from '../../checker/engine/model.ts';
import { type KafkaConfig, modelledConsumers } from './config.ts';
import { type Action, ActionKind, actionKindNames } from './next.ts';
import { defaultHandlers } from './handlers.ts';
import { defaultClientHandlers } from './producer.ts';
import { type FaultBudget, IDEMPOTENT_BASE, Instance, LEADER_BASE, type State, TC_NODE } from './state.ts';

/** How a class touches a part: read, written, a channel's head taken, a message appended at its tail. */
interface Footprint {
  readonly reads: Set<number>;
  readonly writes: Set<number>;
  readonly heads: Set<number>;
  readonly tails: Set<number>;
  /** What decides whether the class is enabled: parts read, and channels that must not be empty. */
  readonly guardReads: Set<number>;
  readonly guardNonEmpty: Set<number>;
  /** The fault budgets its steps spend: it is enabled only while one of them is left. */
  readonly budgets: Set<keyof FaultBudget>;
}

/** The parts of the state every property reads (unknown properties read everything). */
export type PartName =
  | 'producer'
  | 'producerStatus'
  | 'producerExcuses'
  | 'producerHistory'
  | 'coordinator'
  | 'leader'
  | 'consumer'
  | 'markersInFlight';
export const PROPERTY_READS: Readonly<Record<string, readonly PartName[]>> = {
  ReadCommittedIsolation: ['consumer', 'leader', 'producerHistory'],
  AtomicCommit: ['leader'],
  NoLostWrite: ['leader', 'producerHistory'],
  ZombieFencing: ['leader', 'coordinator'],
  Idempotence: ['leader'],
  ExactlyOnce: ['leader'],
  CoordinatorTransitions: ['coordinator'],
  NoHangingTransaction: ['leader', 'coordinator', 'markersInFlight'],
  ProducerIdAgreement: ['producer', 'producerStatus', 'producerExcuses', 'coordinator'],
  NoSpuriousFatal: ['producer', 'producerExcuses'],
  CoordinatorNotStuck: ['coordinator'],
  // ghostFatalError changes only in the step that makes the producer FATAL, which writes its tm.
  TimedOutProducerFenced: ['producer', 'producerExcuses'],
};

export interface KafkaIndependence extends Independence<Action, State> {
  /** A readable name of each class (for tests and messages). */
  readonly names: readonly string[];
  readonly narrowed: NonNullable<Independence<Action, State>['narrowed']>;
}

/**
 * The transition classes of `cfg` and their relations; `properties` are the invariants checked.
 * Built on first use, since most runs do not reduce.
 */
export function kafkaIndependence(cfg: KafkaConfig, properties: readonly string[]): KafkaIndependence {
  let built: KafkaIndependence | undefined;
  const get = (): KafkaIndependence => (built ??= buildIndependence(cfg, properties));
  return {
    get classes() {
      return get().classes;
    },
    get names() {
      return get().names;
    },
    get dependent() {
      return get().dependent;
    },
    get enablers() {
      return get().enablers;
    },
    get visible() {
      return get().visible;
    },
    get narrowed() {
      return get().narrowed;
    },
    classOf: (a) => get().classOf(a),
    key: actionKey,
  };
}

/**
 * An action's identity for sleep sets: its kind and arguments, the fields by which the footprint
 * tests find an action again after an independent step. Each field has its own bits (kind 6,
 * actor and target 13, conn 15, api 6: 53 in all, every key a safe integer), so equal keys are
 * equal actions.
 */
export function actionKey(a: Action): number {
  return (
    (((field(a.kind, 6) * 2 ** 13 + field(a.actor, 13)) * 2 ** 13 + field(a.target, 13)) * 2 ** 15 +
      field(a.conn, 15)) *
      2 ** 6 +
    field(a.api, 6)
  );
}

function field(v: number, bits: number): number {
  if (!Number.isInteger(v) || v < -1 || v + 1 >= 2 ** bits)
    throw new RangeError(`action key: ${v} does not fit in ${bits} bits`);
  return v + 1;
}

function buildIndependence(cfg: KafkaConfig, properties: readonly string[]): KafkaIndependence {
  const producers = cfg.transactionalIds * cfg.instancesPerId;
  const idempotent = cfg.idempotentProducers;
  const leaders = cfg.partitions + (cfg.app === 'consume-transform-produce' ? 1 : 0);
  const offsetsLeader = cfg.app === 'consume-transform-produce' ? cfg.partitions : -1;
  const { readCommitted, readUncommitted } = modelledConsumers(cfg);
  const consumers = readCommitted + readUncommitted;
  const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

  // ---- Parts ----
  let parts = 0;
  const block = (n: number): number[] => range(n).map(() => parts++);
  const P = block(producers);
  /** What properties read of a client: its TransactionManager state, producer id, epoch and request in flight. */
  const PT = block(producers);
  const PC = block(producers);
  const PS = block(producers);
  const PG = block(producers);
  const HP = block(producers);
  const I = block(idempotent);
  const IC = block(idempotent);
  const TC = parts++;
  const TV = parts++;
  const G = parts++;
  const L = block(leaders);
  const C = block(consumers);
  const F = new Map((Object.keys(cfg.faults) as (keyof FaultBudget)[]).map((k) => [k, parts++]));
  const fault = (k: keyof FaultBudget): number => F.get(k)!;
  const leaderNode = (q: number): number => LEADER_BASE + q;
  const idempotentNode = (j: number): number => IDEMPOTENT_BASE + j;
  // Channels: clients to the coordinator and to leaders, the coordinator to leaders, and back.
  const channelPart = new Map<string, number>();
  const link = (from: number, to: number): void => {
    channelPart.set(`${from}>${to}`, parts++);
    channelPart.set(`${to}>${from}`, parts++);
  };
  for (const i of range(producers)) {
    link(i, TC_NODE);
    for (const q of range(leaders)) link(i, leaderNode(q));
  }
  for (const j of range(idempotent)) for (const q of range(leaders)) link(idempotentNode(j), leaderNode(q));
  for (const q of range(leaders)) link(TC_NODE, leaderNode(q));
  const CH = (from: number, to: number): number => {
    const part = channelPart.get(`${from}>${to}`);
    if (part === undefined) throw new Error(`no channel from node ${from} to node ${to}`);
    return part;
  };
  const channelsFrom = (node: number): number[] =>
    [...channelPart].filter(([k]) => k.startsWith(`${node}>`)).map(([, v]) => v);
  const channelsTo = (node: number): number[] =>
    [...channelPart].filter(([k]) => k.endsWith(`>${node}`)).map(([, v]) => v);
  // The narrower claims below follow what the model's own handlers do (handlers.ts, and the
  // client's in producer.ts); a user-defined variant's overrides may do otherwise, so they get
  // the claims that follow from the state alone.
  const asShipped = cfg.handlers === defaultHandlers && cfg.clientHandlers === defaultClientHandlers;
  const producersOf = (t: number): number[] =>
    range(cfg.instancesPerId).map((k) => t * cfg.instancesPerId + k);

  // ---- Classes ----
  const footprints: Footprint[] = [];
  const names: string[] = [];
  const classByKey = new Map<string, number>();
  const define = (key: string, build: (f: Footprint) => void): void => {
    const f: Footprint = {
      reads: new Set(),
      writes: new Set(),
      heads: new Set(),
      tails: new Set(),
      guardReads: new Set(),
      guardNonEmpty: new Set(),
      budgets: new Set(),
    };
    build(f);
    classByKey.set(key, footprints.length);
    footprints.push(f);
    names.push(key.replace(/^\d+/, (kind) => actionKindNames[Number(kind)]!));
  };
  const add = (set: Set<number>, ...items: number[]): void => items.forEach((x) => set.add(x));

  // A transactional client's own step or its handling of an answer: its whole client state, what it
  // sends, the group it joins, the offsets it fetches and the cluster's transaction version.
  const client = (f: Footprint, i: number, keepsTm = false): void => {
    add(f.writes, P[i]!, HP[i]!, ...(keepsTm ? [] : [PT[i]!]), ...(offsetsLeader >= 0 ? [G] : []));
    add(f.reads, PC[i]!, PS[i]!, TV, ...(offsetsLeader >= 0 ? [L[offsetsLeader]!] : []));
    add(f.tails, ...channelsFrom(i));
    add(f.guardReads, P[i]!, PS[i]!, ...(offsetsLeader >= 0 ? [L[offsetsLeader]!] : []));
  };
  const spends = (f: Footprint, k: keyof FaultBudget): void => {
    add(f.writes, fault(k));
    add(f.guardReads, fault(k));
    f.budgets.add(k);
  };
  // The coordinator: its memory and log, what it sends, the connections it answers on, and the
  // ghost excuses and fencing it notes for every instance.
  const coordinator = (f: Footprint): void => {
    add(f.writes, TC, ...PG);
    add(f.reads, TV, ...PC, ...PS);
    add(f.tails, ...channelsFrom(TC_NODE));
    add(f.guardReads, TC);
  };
  // A leader: its log and producer state, what it sends, and the clients' connections it answers on.
  const leader = (f: Footprint, q: number): void => {
    add(f.writes, L[q]!, ...(q === offsetsLeader ? [G] : []));
    add(f.reads, TV, ...PC, ...IC, ...PS);
    add(f.tails, ...channelsFrom(leaderNode(q)));
    add(f.guardReads, L[q]!);
  };
  // A timeout or expiry opens a new connection and spends its fault budget.
  const reconnects = (f: Footprint, connections: number, budget: keyof FaultBudget): void => {
    add(f.writes, connections);
    spends(f, budget);
  };
  const answersOnly = (f: Footprint, ...channels: number[]): void => {
    f.tails.clear();
    add(f.tails, ...channels);
  };
  const idempotentClient = (f: Footprint, j: number): void => {
    add(f.writes, I[j]!);
    add(f.reads, IC[j]!);
    add(f.tails, ...channelsFrom(idempotentNode(j)));
    add(f.guardReads, I[j]!);
  };

  for (const i of range(producers)) {
    for (const kind of [
      ActionKind.initTransactions,
      ActionKind.fetchOffsets,
      ActionKind.beginTransaction,
      ActionKind.sendOffsetsToTransaction,
      ActionKind.commitTransaction,
      ActionKind.abortTransaction,
      ActionKind.sendTxnRequest,
    ]) {
      define(`${kind}/${i}`, (f) => {
        client(f, i);
        if (kind !== ActionKind.initTransactions) return;
        add(f.writes, PS[i]!);
        // Only the start waits for the instance before (canStart).
        if (i % cfg.instancesPerId > 0) add(f.guardReads, PS[i - 1]!);
      });
    }
    define(`${ActionKind.requestTimeout}/${i}`, (f) => {
      client(f, i);
      reconnects(f, PC[i]!, 'requestTimeouts');
    });
    define(`${ActionKind.crash}/${i}`, (f) => {
      client(f, i);
      add(f.writes, PS[i]!);
      spends(f, 'producerCrashes');
    });
    for (const q of range(cfg.partitions)) {
      // Queuing a record and draining a batch leave the TransactionManager's state, id and epoch alone.
      define(`${ActionKind.send}/${i}/${q}`, (f) => client(f, i, true));
      define(`${ActionKind.sendProduce}/${i}/${q}`, (f) => client(f, i, true));
      define(`${ActionKind.produceTimeout}/${i}/${q}`, (f) => {
        client(f, i);
        reconnects(f, PC[i]!, 'requestTimeouts');
      });
      define(`${ActionKind.batchExpired}/${i}/${q}`, (f) => {
        client(f, i);
        reconnects(f, PC[i]!, 'batchExpiries');
      });
    }
  }
  for (const j of range(idempotent)) {
    define(`${ActionKind.idempotentInitProducerId}/${j}`, (f) => {
      idempotentClient(f, j);
      add(f.writes, TC);
    });
    for (const q of range(cfg.partitions)) {
      define(`${ActionKind.idempotentSend}/${j}/${q}`, (f) => idempotentClient(f, j));
      define(`${ActionKind.idempotentSendProduce}/${j}/${q}`, (f) => idempotentClient(f, j));
      define(`${ActionKind.idempotentProduceTimeout}/${j}/${q}`, (f) => {
        idempotentClient(f, j);
        reconnects(f, IC[j]!, 'requestTimeouts');
      });
      define(`${ActionKind.idempotentBatchExpired}/${j}/${q}`, (f) => {
        idempotentClient(f, j);
        reconnects(f, IC[j]!, 'batchExpiries');
      });
    }
  }
  // Deliveries and losses, one class per pair of nodes (every connection between them).
  for (const [key, channel] of channelPart) {
    const [from, to] = key.split('>').map(Number) as [number, number];
    define(`${ActionKind.deliver}/${from}/${to}`, (f) => {
      add(f.heads, channel);
      add(f.guardNonEmpty, channel);
      if (to === TC_NODE) coordinator(f);
      else if (to >= IDEMPOTENT_BASE) idempotentClient(f, to - IDEMPOTENT_BASE);
      else if (to >= LEADER_BASE) leader(f, to - LEADER_BASE);
      else client(f, to);
      f.guardReads.clear();
      // A broker answers the client whose request it takes: a leader may first ask the
      // coordinator to verify it (KIP-890), a coordinator may send markers to the leaders.
      if (asShipped && to >= LEADER_BASE && to < IDEMPOTENT_BASE && from !== TC_NODE)
        answersOnly(f, CH(to, from), CH(to, TC_NODE));
      if (asShipped && to === TC_NODE && from < LEADER_BASE)
        answersOnly(f, CH(TC_NODE, from), ...range(leaders).map((q) => CH(TC_NODE, leaderNode(q))));
    });
    define(`${ActionKind.lose}/${from}/${to}`, (f) => {
      add(f.heads, channel);
      add(f.guardNonEmpty, channel);
      spends(f, 'requestLoss');
      spends(f, 'responseLoss');
    });
  }
  for (const t of range(cfg.transactionalIds)) {
    const instances = producersOf(t);
    define(`${ActionKind.transactionTimeout}/${t}`, (f) => {
      coordinator(f);
      spends(f, 'transactionTimeouts');
    });
    define(`${ActionKind.completeTransaction}/${t}`, (f) => coordinator(f));
    define(`${ActionKind.completeAppend}/${t}`, (f) => coordinator(f));
    define(`${ActionKind.failAppend}/${t}`, (f) => {
      coordinator(f);
      spends(f, 'appendFailures');
    });
    define(`${ActionKind.transactionalIdExpiry}/${t}`, (f) => {
      coordinator(f);
      spends(f, 'transactionalIdExpiries');
      // noteExpiry reads the instances' producer ids, open transactions and grants on their way.
      add(f.reads, ...instances.flatMap((i) => [P[i]!, HP[i]!, CH(TC_NODE, i)]));
      add(f.guardReads, ...channelsTo(TC_NODE));
    });
    for (const q of range(leaders)) {
      define(`${ActionKind.resendTxnMarker}/${t}/${q}`, (f) => {
        coordinator(f);
        add(f.guardReads, CH(TC_NODE, leaderNode(q)), CH(leaderNode(q), TC_NODE));
      });
    }
  }
  define(`${ActionKind.coordinatorFailover}`, (f) => {
    coordinator(f);
    spends(f, 'coordinatorFailovers');
    add(f.writes, ...channelsTo(TC_NODE), ...channelsFrom(TC_NODE));
  });
  define(`${ActionKind.loadTransactions}`, (f) => coordinator(f));
  define(`${ActionKind.finalizeTransactionVersion}`, (f) => {
    add(f.writes, TV);
    add(f.guardReads, TV);
    spends(f, 'transactionVersionChanges');
  });
  for (const q of range(leaders)) {
    const both = [CH(TC_NODE, leaderNode(q)), CH(leaderNode(q), TC_NODE)];
    define(`${ActionKind.markerTimeout}/${q}`, (f) => {
      coordinator(f);
      spends(f, 'markerTimeouts');
      add(f.guardReads, ...both);
    });
    define(`${ActionKind.verificationTimeout}/${q}`, (f) => {
      leader(f, q);
      add(f.guardReads, ...both);
    });
    define(`${ActionKind.producerStateExpiry}/${q}`, (f) => {
      leader(f, q);
      spends(f, 'producerStateExpiries');
      add(f.guardReads, ...channelsTo(leaderNode(q)));
    });
  }
  for (const c of range(consumers)) {
    for (const q of range(cfg.partitions)) {
      define(`${ActionKind.fetch}/${c}/${q}`, (f) => {
        add(f.writes, C[c]!);
        add(f.reads, L[q]!);
        add(f.guardReads, C[c]!, L[q]!);
      });
    }
  }

  // A guard reads what it decides on; the step reads it too.
  for (const f of footprints) for (const g of f.guardReads) if (!f.writes.has(g)) f.reads.add(g);

  // ---- Relations ----
  const touches = (f: Footprint, part: number): boolean =>
    f.reads.has(part) || f.writes.has(part) || f.heads.has(part) || f.tails.has(part);
  const dependentPair = (a: Footprint, b: Footprint): boolean => {
    for (const w of a.writes) if (touches(b, w)) return true;
    for (const w of b.writes) if (touches(a, w)) return true;
    for (const h of a.heads) if (b.heads.has(h) || b.reads.has(h)) return true;
    for (const t of a.tails) if (b.tails.has(t) || b.reads.has(t)) return true;
    for (const h of b.heads) if (a.reads.has(h)) return true;
    for (const t of b.tails) if (a.reads.has(t)) return true;
    return false;
  };
  const canEnable = (by: Footprint, f: Footprint): boolean => {
    for (const g of f.guardReads) if (by.writes.has(g) || by.heads.has(g) || by.tails.has(g)) return true;
    for (const g of f.guardNonEmpty) if (by.tails.has(g) || by.writes.has(g)) return true;
    return false;
  };
  const classes = footprints.length;
  const dependent = footprints.map((a, x) =>
    range(classes).filter((y) => y !== x && dependentPair(a, footprints[y]!)),
  );
  const classNamed = (kind: ActionKind, ...args: number[]): number =>
    classByKey.get([kind, ...args].join('/'))!;
  const enablers = footprints.map((f, x) =>
    range(classes).filter((y) => y !== x && canEnable(footprints[y]!, f)),
  );
  if (asShipped) {
    // The shipped handlers answer a verification and a marker in the step that takes it
    // (coordinator.ts handleVerifyPartitionsInTransaction, partition.ts handleWriteTxnMarkers),
    // so a held request or a due marker loses its message, which is what lets it time out or be
    // sent again, only by a loss, a failover (and the load after it) or a marker timeout.
    const failover = classNamed(ActionKind.coordinatorFailover);
    const load = classNamed(ActionKind.loadTransactions);
    enablers[load] = [failover];
    for (let q = 0; q < cfg.partitions; q++) {
      const losses = [
        classNamed(ActionKind.lose, TC_NODE, leaderNode(q)),
        classNamed(ActionKind.lose, leaderNode(q), TC_NODE),
      ];
      enablers[classNamed(ActionKind.verificationTimeout, q)] = [...losses, failover, load];
      for (let t = 0; t < cfg.transactionalIds; t++)
        enablers[classNamed(ActionKind.resendTxnMarker, t, q)] = [
          ...losses,
          failover,
          load,
          classNamed(ActionKind.markerTimeout, q),
        ];
    }
  }

  const read = new Set<number>();
  for (const name of properties) {
    const what = PROPERTY_READS[name];
    if (what === undefined) for (let part = 0; part < parts; part++) read.add(part);
    for (const part of what ?? []) {
      if (part === 'producer') add(read, ...PT);
      if (part === 'producerStatus') add(read, ...PS);
      if (part === 'producerExcuses') add(read, ...PG);
      if (part === 'producerHistory') add(read, ...HP);
      if (part === 'coordinator') add(read, TC);
      if (part === 'leader') add(read, ...L);
      if (part === 'consumer') add(read, ...C);
      if (part === 'markersInFlight') add(read, ...range(leaders).map((q) => CH(TC_NODE, leaderNode(q))));
    }
  }
  const visible = footprints.map((f) => [...f.writes, ...f.heads, ...f.tails].some((part) => read.has(part)));
  // Narrower enabling sets, each for states where one reason keeps a class disabled. Budgets are
  // only spent and an instance starts once: such a class is never enabled again. A broker answers
  // a client only after a request: with none on its way from that client and none held (leader)
  // or being appended (coordinator), only the client's sending can enable the answer.
  const budgetKinds = Object.keys(cfg.faults) as (keyof FaultBudget)[];
  const budgetMasks = footprints.map((f) =>
    [...f.budgets].reduce((mask, k) => mask | (1 << budgetKinds.indexOf(k)), 0),
  );
  const appendersTo = (channel: number): number[] =>
    range(classes).filter((c) => footprints[c]!.tails.has(channel));
  const narrowedByKey = new Map<string, readonly (readonly number[] | undefined)[]>();
  const narrowed = {
    // One character per bit, '1' or '0', as the sets below read them back.
    key: (s: State): string => {
      let bits = '';
      for (const k of budgetKinds) bits += s.faults[k] === 0 ? '1' : '0';
      for (let i = 0; i < producers; i++) bits += s.producers[i]!.status !== Instance.NotStarted ? '1' : '0';
      if (!asShipped) return bits;
      // Which of the producers' channels to the leaders and the coordinator hold a message.
      const busy = new Uint8Array(producers * (cfg.partitions + 1));
      for (const ch of s.network) {
        if (ch.from >= producers || ch.messages.length === 0) continue;
        if (ch.to === TC_NODE) busy[ch.from * (cfg.partitions + 1) + cfg.partitions] = 1;
        else if (ch.to - LEADER_BASE < cfg.partitions)
          busy[ch.from * (cfg.partitions + 1) + ch.to - LEADER_BASE] = 1;
      }
      for (let q = 0; q < cfg.partitions; q++)
        for (const h of s.partitions[q]!.held)
          if (h.from < producers) busy[h.from * (cfg.partitions + 1) + q] = 1;
      for (const a of s.coordinator.appends)
        if (a.from < producers) busy[a.from * (cfg.partitions + 1) + cfg.partitions] = 1;
      for (const b of busy) bits += b === 0 ? '1' : '0';
      return bits;
    },
    enablers: (key: string): readonly (readonly number[] | undefined)[] => {
      let known = narrowedByKey.get(key);
      if (known !== undefined) return known;
      const sets: (readonly number[] | undefined)[] = new Array(classes).fill(undefined);
      let bit = 0;
      const next = (): boolean => key[bit++] === '1';
      const spent = budgetKinds.reduce((mask, _, k) => (next() ? mask | (1 << k) : mask), 0);
      for (let c = 0; c < classes; c++)
        if (budgetMasks[c]! !== 0 && (budgetMasks[c]! & ~spent) === 0) sets[c] = [];
      for (let i = 0; i < producers; i++) if (next()) sets[classNamed(ActionKind.initTransactions, i)] = [];
      for (let i = 0; asShipped && i < producers; i++) {
        for (let q = 0; q < cfg.partitions; q++)
          if (next())
            sets[classNamed(ActionKind.deliver, leaderNode(q), i)] = appendersTo(CH(i, leaderNode(q)));
        if (next()) sets[classNamed(ActionKind.deliver, TC_NODE, i)] = appendersTo(CH(i, TC_NODE));
      }
      known = sets;
      narrowedByKey.set(key, known);
      return known;
    },
  };

  const keyOf = (a: Action): string => {
    switch (a.kind) {
      case ActionKind.send:
      case ActionKind.sendProduce:
      case ActionKind.produceTimeout:
      case ActionKind.batchExpired:
      case ActionKind.idempotentSend:
      case ActionKind.idempotentSendProduce:
      case ActionKind.idempotentProduceTimeout:
      case ActionKind.idempotentBatchExpired:
      case ActionKind.deliver:
      case ActionKind.lose:
      case ActionKind.resendTxnMarker:
      case ActionKind.fetch:
        return `${a.kind}/${a.actor}/${a.target}`;
      case ActionKind.markerTimeout:
        return `${a.kind}/${a.target}`;
      case ActionKind.coordinatorFailover:
      case ActionKind.loadTransactions:
      case ActionKind.finalizeTransactionVersion:
        return `${a.kind}`;
      default:
        return `${a.kind}/${a.actor}`;
    }
  };
  const classOf = (a: Action): number => {
    const c = classByKey.get(keyOf(a));
    if (c === undefined) throw new Error(`no transition class for action ${JSON.stringify(a)}`);
    return c;
  };
  return {
    classes,
    names,
    classOf,
    dependent,
    enablers,
    visible,
    narrowed,
  };
}
