// The Kafka state as 32-bit words, for fingerprints and for crossing threads (Model.pack,
// Model.unpack): every field of every actor in a
// fixed order, each list behind its length and each optional object behind a presence word, so
// equal words mean equal states. Writing the words directly costs a fraction of the engine's
// generic walk over objects (which reads each object's keys). A field added to state.ts must be
// added here too; pack.test.ts changes every field of reachable states and fails on one left out.
import type {
  Api,
  BatchKind,
  BatchStatus,
  Channel,
  ClientBatch,
  ClientTxnHistory,
  Consumer,
  Coordinator,
  Decision,
  Delivered,
  Err,
  FaultBudget,
  HeldProduce,
  IdempotentBatch,
  IdempotentProducer,
  Instance,
  LogBatch,
  Message,
  Partition,
  PartitionSequences,
  Producer,
  ProducerEntry,
  Request,
  Response,
  State,
  Tm,
  Told,
  TxnAppend,
  TxnLogRecord,
  TxnMetadata,
  TxnRequestSlot,
  TxnState,
  Verification,
} from './state.ts';

// The words being written and the cursor: module-level so the writers take no extra argument on
// the hot path; packState sets them at the start of each call and nothing else keeps them.
let w: Int32Array = new Int32Array(0);
let n = 0;

function put(v: number | boolean): void {
  w[n++] = +v;
}

function putList(items: readonly number[]): void {
  put(items.length);
  for (const v of items) w[n++] = v;
}

/** Stops before a list could run past the words the engine gave; a cut state would collide. */
function room(words: number): void {
  if (n + words > w.length) throw new RangeError(`a Kafka state needs more than ${w.length} packed words`);
}

function putMessage(m: Message): void {
  put(m.api);
  put(m.txnId);
  put(m.pid);
  put(m.epoch);
  put(m.partitions);
  put(m.seq);
  put(m.coordinatorEpoch);
  if (m.response) {
    put(1);
    put(m.error);
    put(m.guard);
    return;
  }
  put(0);
  put(m.commit);
  put(m.value);
  put(m.generation);
  put(m.verifyOnly);
  put(m.guard);
  put(m.supports);
  put(m.ghostProducer);
  put(m.ghostTxn);
  put(m.ghostRecord);
}

function putBatch(b: ClientBatch): void {
  put(b.partition);
  put(b.seq);
  put(b.status);
  put(b.retried);
  put(b.value);
  put(b.ghostRecord);
}

function putProducer(p: Producer): void {
  room(32 + p.nextSeq.length + p.conns.length + 6 * p.batches.length);
  put(p.txnId);
  put(p.instance);
  put(p.status);
  put(p.tm);
  put(p.pid);
  put(p.epoch);
  put(p.bumpRequired);
  put(p.txnStarted);
  put(p.added);
  put(p.pendingAdd);
  if (p.request === null) put(-1);
  else {
    put(p.request.api);
    put(p.request.partitions);
    put(p.request.commit);
  }
  putList(p.nextSeq);
  put(p.batches.length);
  for (const b of p.batches) putBatch(b);
  putList(p.conns);
  put(p.txnsBegun);
  put(p.recordsSent);
  put(p.generation);
  put(p.inputPosition);
  put(p.offsetToCommit);
  put(p.offsetsAdded);
  put(p.offsetsCommitted);
  put(p.ghostExcuses);
  put(p.transactionV2);
}

function putIdempotentProducer(p: IdempotentProducer): void {
  room(8 + 4 * p.sequences.length + 7 * p.batches.length + p.conns.length);
  put(p.pid);
  put(p.epoch);
  put(p.fatal);
  put(p.sequences.length);
  for (const q of p.sequences) {
    put(q.pid);
    put(q.epoch);
    put(q.nextSeq);
    put(q.lastAcked);
  }
  put(p.batches.length);
  for (const b of p.batches) {
    put(b.partition);
    put(b.status);
    put(b.pid);
    put(b.epoch);
    put(b.seq);
    put(b.retried);
    put(b.record);
  }
  putList(p.conns);
  put(p.recordsSent);
}

function putMetadata(md: TxnMetadata | null): void {
  if (md === null) {
    put(0);
    return;
  }
  put(1);
  put(md.pid);
  put(md.epoch);
  put(md.lastEpoch);
  put(md.state);
  put(md.pendingState);
  put(md.partitions);
  put(md.ghostTxn);
  put(md.hasFailedEpochFence);
  put(md.prevPid);
  put(md.nextPid);
  put(md.transactionVersion);
}

function putLogRecord(r: TxnLogRecord | null): void {
  if (r === null) {
    put(0);
    return;
  }
  put(1);
  put(r.pid);
  put(r.epoch);
  put(r.state);
  put(r.partitions);
  put(r.ghostTxn);
  put(r.prevPid);
  put(r.nextPid);
  put(r.lastEpoch);
  put(r.transactionVersion);
  put(r.ghostPrevState);
  put(r.ghostPrevPid);
  put(r.ghostPrevEpoch);
}

function putAppend(a: TxnAppend): void {
  room(60);
  put(a.txnId);
  putMetadata(a.transit);
  put(a.epochFence);
  put(a.from);
  put(a.conn);
  put(a.request !== null);
  if (a.request !== null) putMessage(a.request);
  put(a.response !== null);
  if (a.response !== null) putMessage(a.response);
}

function putCoordinator(c: Coordinator): void {
  room(8 + 26 * c.metadata.length + c.markerConns.length);
  put(c.epoch);
  put(c.loading);
  put(c.nextPid);
  put(c.metadata.length);
  for (const md of c.metadata) putMetadata(md);
  for (const r of c.log) putLogRecord(r);
  put(c.appends.length);
  for (const a of c.appends) putAppend(a);
  putList(c.markerConns);
}

function putLogBatch(b: LogBatch): void {
  put(b.kind);
  put(b.pid);
  put(b.epoch);
  put(b.seq);
  put(b.transactional);
  put(b.value);
  put(b.ghostTxn);
  put(b.ghostRecord);
}

function putPartition(part: Partition): void {
  room(8 + 8 * part.log.length + 5 * part.verifications.length);
  put(part.log.length);
  for (const b of part.log) putLogBatch(b);
  put(part.producers.length);
  for (const e of part.producers) {
    room(5 + e.lastSeqs.length);
    put(e.pid);
    put(e.epoch);
    putList(e.lastSeqs);
    put(e.coordinatorEpoch);
    put(e.txnFirstOffset);
  }
  put(part.verifications.length);
  for (const v of part.verifications) {
    put(v.pid);
    put(v.epoch);
    put(v.guard);
    put(v.lowestSeq);
    put(v.supportsEpochBump);
  }
  put(part.held.length);
  for (const h of part.held) {
    room(24);
    put(h.guard);
    put(h.from);
    put(h.conn);
    putMessage(h.request);
  }
  put(part.nextGuard);
}

function putConsumer(c: Consumer): void {
  room(3 + c.position.length + 4 * c.delivered.length);
  put(c.readCommitted);
  putList(c.position);
  put(c.delivered.length);
  for (const d of c.delivered) {
    put(d.partition);
    put(d.offset);
    put(d.ghostTxn);
    put(d.ghostRecord);
  }
}

function putChannel(ch: Channel): void {
  room(5 + 20 * ch.messages.length);
  put(ch.from);
  put(ch.to);
  put(ch.conn);
  put(ch.messages.length);
  for (const m of ch.messages) putMessage(m);
}

/** Writes `s` into `words` and returns how many words it took. */
export function packState(s: State, words: Int32Array): number {
  w = words;
  n = 0;
  room(16);
  put(s.transactionVersion);
  put(s.group === null ? -1 : s.group.generation);
  const f = s.faults;
  put(f.requestLoss);
  put(f.responseLoss);
  put(f.requestTimeouts);
  put(f.batchExpiries);
  put(f.producerCrashes);
  put(f.coordinatorFailovers);
  put(f.transactionTimeouts);
  put(f.appendFailures);
  put(f.markerTimeouts);
  put(f.transactionalIdExpiries);
  put(f.producerStateExpiries);
  put(f.transactionVersionChanges);
  put(s.producers.length);
  for (const p of s.producers) putProducer(p);
  put(s.idempotentProducers.length);
  for (const p of s.idempotentProducers) putIdempotentProducer(p);
  putCoordinator(s.coordinator);
  room(1);
  put(s.partitions.length);
  for (const part of s.partitions) putPartition(part);
  room(1);
  put(s.consumers.length);
  for (const c of s.consumers) putConsumer(c);
  room(1);
  put(s.network.length);
  for (const ch of s.network) putChannel(ch);
  room(1 + 6 * s.history.length);
  put(s.history.length);
  for (const h of s.history) {
    put(h.decision);
    put(h.told);
    put(h.recordsSent);
    put(h.prepared);
    put(h.fenced);
    put(h.expired);
  }
  return n;
}

// ---- Back from words (Model.unpack): states cross worker threads as integers ----------------------
// Objects are built with the keys in the order the model's own constructors use.

// The words being read and the cursor, set by unpackState as the writers' are by packState.
let r: Int32Array = new Int32Array(0);
let at = 0;

function num(): number {
  return r[at++]!;
}

function bool(): boolean {
  return r[at++] !== 0;
}

function numList(): number[] {
  const length = num();
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) out[i] = num();
  return out;
}

function list<T>(read: () => T): T[] {
  const length = num();
  const out = new Array<T>(length);
  for (let i = 0; i < length; i++) out[i] = read();
  return out;
}

function readMessage(): Message {
  const api = num() as Api;
  const txnId = num();
  const pid = num();
  const epoch = num();
  const partitions = num();
  const seq = num();
  const coordinatorEpoch = num();
  if (bool()) {
    const error = num() as Err;
    const guard = num();
    return { api, response: true, txnId, error, pid, epoch, partitions, seq, coordinatorEpoch, guard };
  }
  const commit = bool();
  const value = num();
  const generation = num();
  const verifyOnly = bool();
  const guard = num();
  const supports = num();
  const ghostProducer = num();
  const ghostTxn = num();
  const ghostRecord = num();
  return {
    api,
    response: false,
    txnId,
    pid,
    epoch,
    partitions,
    commit,
    seq,
    coordinatorEpoch,
    value,
    generation,
    verifyOnly,
    guard,
    supports,
    ghostProducer,
    ghostTxn,
    ghostRecord,
  };
}

function readRequest(): Request {
  return readMessage() as Request;
}

function readResponse(): Response {
  return readMessage() as Response;
}

function readProducer(): Producer {
  const txnId = num();
  const instance = num();
  const status = num() as Instance;
  const tm = num() as Tm;
  const pid = num();
  const epoch = num();
  const bumpRequired = bool();
  const txnStarted = bool();
  const added = num();
  const pendingAdd = num();
  const api = num();
  const request: TxnRequestSlot | null =
    api === -1 ? null : { api: api as Api, partitions: num(), commit: bool() };
  const nextSeq = numList();
  const batches = list<ClientBatch>(() => ({
    partition: num(),
    seq: num(),
    status: num() as BatchStatus,
    retried: bool(),
    value: num(),
    ghostRecord: num(),
  }));
  const conns = numList();
  return {
    txnId,
    instance,
    status,
    tm,
    pid,
    epoch,
    bumpRequired,
    txnStarted,
    added,
    pendingAdd,
    request,
    nextSeq,
    batches,
    conns,
    txnsBegun: num(),
    recordsSent: num(),
    generation: num(),
    inputPosition: num(),
    offsetToCommit: num(),
    offsetsAdded: bool(),
    offsetsCommitted: bool(),
    ghostExcuses: num(),
    transactionV2: bool(),
  };
}

function readIdempotentProducer(): IdempotentProducer {
  const pid = num();
  const epoch = num();
  const fatal = bool();
  const sequences = list<PartitionSequences>(() => ({
    pid: num(),
    epoch: num(),
    nextSeq: num(),
    lastAcked: num(),
  }));
  const batches = list<IdempotentBatch>(() => ({
    partition: num(),
    status: num() as BatchStatus,
    pid: num(),
    epoch: num(),
    seq: num(),
    retried: bool(),
    record: num(),
  }));
  return { pid, epoch, fatal, sequences, batches, conns: numList(), recordsSent: num() };
}

function readMetadata(): TxnMetadata | null {
  if (!bool()) return null;
  return {
    pid: num(),
    epoch: num(),
    lastEpoch: num(),
    state: num() as TxnState,
    pendingState: num(),
    partitions: num(),
    ghostTxn: num(),
    hasFailedEpochFence: bool(),
    prevPid: num(),
    nextPid: num(),
    transactionVersion: num(),
  };
}

function readLogRecord(): TxnLogRecord | null {
  if (!bool()) return null;
  return {
    pid: num(),
    epoch: num(),
    state: num() as TxnState,
    partitions: num(),
    ghostTxn: num(),
    prevPid: num(),
    nextPid: num(),
    lastEpoch: num(),
    transactionVersion: num(),
    ghostPrevState: num(),
    ghostPrevPid: num(),
    ghostPrevEpoch: num(),
  };
}

function readAppend(): TxnAppend {
  const txnId = num();
  const transit = readMetadata()!;
  const epochFence = bool();
  const from = num();
  const conn = num();
  const request = bool() ? readRequest() : null;
  const response = bool() ? readResponse() : null;
  return { txnId, transit, epochFence, request, response, from, conn };
}

function readCoordinator(): Coordinator {
  const epoch = num();
  const loading = bool();
  const nextPid = num();
  const ids = num();
  const metadata = Array.from({ length: ids }, readMetadata);
  const log = Array.from({ length: ids }, readLogRecord);
  return { epoch, loading, nextPid, metadata, log, appends: list(readAppend), markerConns: numList() };
}

function readPartition(): Partition {
  const log = list<LogBatch>(() => ({
    kind: num() as BatchKind,
    pid: num(),
    epoch: num(),
    seq: num(),
    transactional: bool(),
    value: num(),
    ghostTxn: num(),
    ghostRecord: num(),
  }));
  const producers = list<ProducerEntry>(() => ({
    pid: num(),
    epoch: num(),
    lastSeqs: numList(),
    coordinatorEpoch: num(),
    txnFirstOffset: num(),
  }));
  const verifications = list<Verification>(() => ({
    pid: num(),
    epoch: num(),
    guard: num(),
    lowestSeq: num(),
    supportsEpochBump: bool(),
  }));
  const held = list<HeldProduce>(() => ({ guard: num(), from: num(), conn: num(), request: readRequest() }));
  return { log, producers, verifications, held, nextGuard: num() };
}

function readConsumer(): Consumer {
  const readCommitted = bool();
  const position = numList();
  return {
    readCommitted,
    position,
    delivered: list<Delivered>(() => ({
      partition: num(),
      offset: num(),
      ghostTxn: num(),
      ghostRecord: num(),
    })),
  };
}

function readChannel(): Channel {
  return { from: num(), to: num(), conn: num(), messages: list(readMessage) };
}

/** The state `packState` wrote as `words`. */
export function unpackState(words: Int32Array): State {
  r = words;
  at = 0;
  const transactionVersion = num();
  const generation = num();
  const faults: FaultBudget = {
    requestLoss: num(),
    responseLoss: num(),
    requestTimeouts: num(),
    batchExpiries: num(),
    producerCrashes: num(),
    coordinatorFailovers: num(),
    transactionTimeouts: num(),
    appendFailures: num(),
    markerTimeouts: num(),
    transactionalIdExpiries: num(),
    producerStateExpiries: num(),
    transactionVersionChanges: num(),
  };
  const producers = list(readProducer);
  const idempotentProducers = list(readIdempotentProducer);
  const coordinator = readCoordinator();
  const partitions = list(readPartition);
  const consumers = list(readConsumer);
  const network = list(readChannel);
  const history = list<ClientTxnHistory>(() => ({
    decision: num() as Decision,
    told: num() as Told,
    recordsSent: num(),
    prepared: bool(),
    fenced: bool(),
    expired: bool(),
  }));
  return {
    transactionVersion,
    producers,
    idempotentProducers,
    group: generation === -1 ? null : { generation },
    coordinator,
    partitions,
    consumers,
    network,
    faults,
    history,
  };
}
