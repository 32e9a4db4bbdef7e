// What a conformance case needs: a model instance of one generation, states built field by field
// the way a Kafka unit test sets up its mocks, and one request, response or client action taken
// through the model's own step function (so the case exercises exactly what the checker runs).
import { type KafkaConfig, type Rules, clientTxnIndex } from '../config.ts';
import { defaultClientHandlers, defaultHandlers } from '../handlers.ts';
import { initialState } from '../index.ts';
import { request, response, send } from '../network.ts';
import { ActionKind, actionLabel } from '../labels.ts';
import { enabledActions, step } from '../next.ts';
import {
  type Coordinator,
  type LogBatch,
  type Message,
  type Partition,
  type Producer,
  type ProducerEntry,
  type Request,
  type Response,
  type State,
  type TxnMetadata,
  Api,
  BatchKind,
  LEADER_BASE,
  NO_EPOCH,
  NO_OFFSET,
  NO_PID,
  KAFKA_MAX_EPOCH,
  NO_STATE,
  TC_NODE,
  TxnState,
} from '../state.ts';
import { setAt } from '../util.ts';
import { generations } from '../variants.ts';

export { request, response };
export const TC = TC_NODE;
/** The node of partition p's leader. */
export const leader = (p: number): number => LEADER_BASE + p;

/** The model's bounds for one case; small, since a case takes one step. */
export type Bounds = Partial<Omit<KafkaConfig, 'variant' | 'rules' | 'handlers'>>;

/** A model instance of `generation` (a name from variants.ts), with switches changed by `rules`. */
export function kafkaConfig(
  generation: string,
  bounds: Bounds = {},
  rules: Partial<Rules> = {},
): KafkaConfig {
  const preset = generations[generation];
  if (preset === undefined) throw new Error(`no generation ${generation}`);
  const brokers = { ...preset.rules, ...rules };
  const cfg: Omit<KafkaConfig, 'clientRules' | 'transactionVersion'> & Bounds = {
    variant: generation,
    rules: brokers,
    transactionalIds: 1,
    instancesPerId: 1,
    idempotentProducers: 0,
    recordsPerIdempotentProducer: 2,
    idempotentClientRules: brokers,
    instanceStart: 'anytime',
    partitions: 2,
    transactionsPerInstance: 2,
    recordsPerTransaction: 2,
    app: 'produce',
    inputRecords: 0,
    afterAbort: 'rewind-committed',
    consumers: { readCommitted: 0, readUncommitted: 0 },
    faults: {
      requestLoss: 0,
      responseLoss: 0,
      requestTimeouts: 0,
      batchExpiries: 0,
      producerCrashes: 0,
      coordinatorFailovers: 0,
      transactionTimeouts: 0,
      appendFailures: 0,
      markerTimeouts: 0,
      transactionalIdExpiries: 0,
      producerStateExpiries: 0,
      transactionVersionChanges: 0,
    },
    coordinatorAppends: 'atomic',
    coordinatorLoading: 'atomic',
    maxEpoch: KAFKA_MAX_EPOCH,
    handlers: defaultHandlers,
    clientHandlers: defaultClientHandlers,
    ...bounds,
  };
  // Every instance runs the brokers' own client unless a case says otherwise.
  const transactionVersion = bounds.transactionVersion ?? (cfg.rules.tv2 ? 2 : 1);
  return {
    ...cfg,
    transactionVersion,
    clientRules: bounds.clientRules ?? Array.from({ length: cfg.instancesPerId }, () => cfg.rules),
  };
}

export function initial(cfg: KafkaConfig): State {
  return initialState(cfg);
}

// ---- Building states ---------------------------------------------------------------------------

export function withCoordinator(s: State, fields: Partial<Coordinator>): State {
  return { ...s, coordinator: { ...s.coordinator, ...fields } };
}

/**
 * The coordinator knows transactional.id `txnId` with this TransactionMetadata (defaults: Empty,
 * no pending state, no partitions), in memory and as its last __transaction_state record.
 */
export function withTxn(s: State, txnId: number, fields: Partial<TxnMetadata>): State {
  // Version 2 unless a case says otherwise: the brokers' own generation then decides.
  const md: TxnMetadata = {
    pid: 0,
    epoch: 0,
    lastEpoch: NO_EPOCH,
    state: TxnState.Empty,
    pendingState: NO_STATE,
    partitions: 0,
    ghostTxn: -1,
    hasFailedEpochFence: false,
    prevPid: NO_PID,
    nextPid: NO_PID,
    transactionVersion: 2,
    ...fields,
  };
  const record = {
    pid: md.pid,
    epoch: md.epoch,
    state: md.state,
    partitions: md.partitions,
    ghostTxn: md.ghostTxn,
    prevPid: md.prevPid,
    nextPid: md.nextPid,
    lastEpoch: NO_EPOCH,
    transactionVersion: md.transactionVersion,
    ghostPrevState: NO_STATE,
    ghostPrevPid: NO_PID,
    ghostPrevEpoch: NO_EPOCH,
  };
  const c = s.coordinator;
  return withCoordinator(s, {
    metadata: setAt(c.metadata, txnId, md),
    log: setAt(c.log, txnId, record),
    nextPid: Math.max(c.nextPid, md.pid + 1),
  });
}

export function txn(s: State, txnId: number): TxnMetadata | null {
  return s.coordinator.metadata[txnId] ?? null;
}

export function withPartition(s: State, p: number, fields: Partial<Partition>): State {
  return { ...s, partitions: setAt(s.partitions, p, { ...s.partitions[p]!, ...fields }) };
}

/** Partition p's leader holds this ProducerStateEntry (defaults: epoch 0, no batches, no open transaction). */
export function withProducerEntry(
  s: State,
  p: number,
  fields: Partial<ProducerEntry> & { pid: number },
): State {
  const entry: ProducerEntry = {
    epoch: 0,
    lastSeqs: [],
    coordinatorEpoch: -1,
    txnFirstOffset: NO_OFFSET,
    ...fields,
  };
  const others = s.partitions[p]!.producers.filter((e) => e.pid !== entry.pid);
  return withPartition(s, p, { producers: [...others, entry].sort((a, b) => a.pid - b.pid) });
}

export function producerEntry(s: State, p: number, pid: number): ProducerEntry | undefined {
  return s.partitions[p]!.producers.find((e) => e.pid === pid);
}

/** A log batch (defaults: a transactional data batch of no client transaction). */
export function batch(fields: Partial<LogBatch> & { pid: number; epoch: number }): LogBatch {
  return {
    kind: BatchKind.Data,
    seq: 0,
    transactional: true,
    value: -1,
    ghostTxn: -1,
    ghostRecord: -1,
    ...fields,
  };
}

export function withProducer(s: State, i: number, fields: Partial<Producer>): State {
  return { ...s, producers: setAt(s.producers, i, { ...s.producers[i]!, ...fields }) };
}

// ---- Taking one step ---------------------------------------------------------------------------

/** The labels of the enabled actions, for reading a failing case. */
export function labels(cfg: KafkaConfig, s: State): string[] {
  return enabledActions(cfg, s).map((a) => actionLabel(cfg, a));
}

/** Takes the enabled action labelled `label` (e.g. 'P0.0: beginTransaction'). */
export function take(cfg: KafkaConfig, s: State, label: string): State {
  const action = enabledActions(cfg, s).find((a) => actionLabel(cfg, a) === label);
  if (action === undefined) throw new Error(`not enabled: ${label}; enabled: ${labels(cfg, s).join(' | ')}`);
  return step(cfg, s, action);
}

/**
 * Puts `message` on the empty connection `from → to` (generation `conn`) and delivers it through
 * the model's own deliver step: a request reaches its handler (or a user variant's override), a
 * response reaches the client, the coordinator or the leader.
 */
export function deliver(
  cfg: KafkaConfig,
  s: State,
  from: number,
  to: number,
  message: Message,
  conn = 0,
): State {
  if (s.network.some((c) => c.from === from && c.to === to && c.conn === conn))
    throw new Error(`connection ${from}→${to}#${conn} is not empty`);
  const sent: State = { ...s, network: send(s.network, from, to, conn, message) };
  const action = enabledActions(cfg, sent).find(
    (a) => a.kind === ActionKind.deliver && a.actor === from && a.target === to && a.conn === conn,
  );
  return step(cfg, sent, action!);
}

/**
 * Sends `req` from producer `client` to `to` and delivers it. Ghost fields left unset name the
 * client and its current client transaction, as the client's own requests do.
 */
export function handle(
  cfg: KafkaConfig,
  s: State,
  client: number,
  to: number,
  req: Request,
  conn = 0,
): State {
  const ghostProducer = req.ghostProducer < 0 ? client : req.ghostProducer;
  const ghostTxn =
    req.ghostTxn < 0
      ? clientTxnIndex(
          cfg,
          client,
          Math.max(0, s.producers[client]!.txnsBegun - (req.api === Api.InitProducerId ? 0 : 1)),
        )
      : req.ghostTxn;
  return deliver(cfg, s, client, to, { ...req, ghostProducer, ghostTxn }, conn);
}

/** The messages waiting on the connection `from → to`, oldest first. */
export function messages(s: State, from: number, to: number, conn = 0): readonly Message[] {
  return s.network.find((c) => c.from === from && c.to === to && c.conn === conn)?.messages ?? [];
}

/** The one response on the connection `from → to`; throws when there is none or more than one. */
export function answer(s: State, from: number, to: number, conn = 0): Response {
  const waiting = messages(s, from, to, conn);
  if (waiting.length !== 1 || !waiting[0]!.response)
    throw new Error(`expected one response on ${from}→${to}#${conn}, found ${JSON.stringify(waiting)}`);
  return waiting[0]!;
}

/** The requests a node sent, on every connection, e.g. the WriteTxnMarkers the coordinator sent. */
export function requestsFrom(s: State, from: number): { to: number; conn: number; request: Request }[] {
  return s.network
    .filter((c) => c.from === from)
    .flatMap((c) =>
      c.messages
        .filter((m): m is Request => !m.response)
        .map((m) => ({ to: c.to, conn: c.conn, request: m })),
    );
}

/** States met on random walks, every one of each walk; `rng` (a seeded generator) picks the steps. */
export function walkStates(cfg: KafkaConfig, walks: number, depth: number, rng: () => number): State[] {
  const out: State[] = [];
  for (let w = 0; w < walks; w++) {
    let s = initialState(cfg);
    for (let d = 0; d < depth; d++) {
      out.push(s);
      const actions = enabledActions(cfg, s);
      if (actions.length === 0) break;
      s = step(cfg, s, actions[Math.floor(rng() * actions.length)]!);
    }
  }
  return out;
}
