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
import { type FingerprintSummary, PACK_WORDS } from '../../checker/engine/model.ts';
import {
  type IdRenaming,
  type Renaming,
  renameIndex,
  renameMask,
  renameNode,
  renamePartitionsField,
} from './renaming.ts';

// The words being written and the cursor: module-level so the writers take no extra argument on
// the hot path; packState sets them at the start of each call and nothing else keeps them.
let w: Int32Array = new Int32Array(0);
let n = 0;
// The renamings the words are written under (null: none), of the data partitions and of the
// transactional.ids and their instances, with the inverses of the lists they move: packing a
// renamed state this way costs a fraction of building it (renamed-states.ts).
let perm: Renaming | null = null;
const inverse: number[] = [];
let ids: IdRenaming | null = null;
const producerFrom: number[] = [];
const txnIdFrom: number[] = [];
const clientTxnFrom: number[] = [];
/** The state being packed under a renaming of ids: a consumer's delivery is renamed by the batch it read. */
let packing: State | null = null;

// The last state unpacked: its words, and for each actor the object unpackState built and where
// its words start and end, by kind. A step returns most actors of its state as they were (the
// model never mutates a state), so packing a successor copies their words instead of writing
// them field by field.
const enum Kind {
  Producers,
  IdempotentProducers,
  Coordinator,
  Partitions,
  Consumers,
  Network,
  History,
  End,
}
let source = new Int32Array(0);
const sourceActors: unknown[] = [];
const sourceStarts: number[] = [];
const sourceEnds: number[] = [];
/** Where each kind's actors start in `sourceActors`; a kind ends where the next starts. */
const kindFirst = new Int32Array(Kind.End + 1);

/** Where `x`, the `i`-th actor of its kind, is among the actors unpacked last, or -1. */
function sourceIndex(x: unknown, kind: Kind, i: number): number {
  const first = kindFirst[kind]!;
  const end = kindFirst[kind + 1]!;
  let j = first + i;
  if (j < end && sourceActors[j] === x) return j;
  for (j = first; j < end; j++) if (sourceActors[j] === x) return j;
  return -1;
}

/** Writes `x`, the `i`-th actor of its kind, or copies its words when it is one unpacked last. */
function putActor<T>(x: T, kind: Kind, i: number, write: (x: T) => void): void {
  if ((perm !== null || ids !== null) && !renamingKeeps(x, kind)) return write(x);
  const j = sourceIndex(x, kind, i);
  if (j === -1) write(x);
  else copy(sourceStarts[j]!, sourceEnds[j]!);
}

function putActors<T>(items: readonly T[], kind: Kind, write: (x: T) => void): void {
  put(items.length);
  for (let i = 0; i < items.length; i++) putActor(items[i]!, kind, i, write);
}

/** Whether an actor's words are the same under the renaming: it names no data partition. */
function renamingKeeps(x: unknown, kind: Kind): boolean {
  if (ids !== null) return false;
  return kind === Kind.History || (kind === Kind.Partitions && (x as Partition).held.length === 0);
}

function put(v: number): void {
  w[n++] = v;
}

function putBool(b: boolean): void {
  w[n++] = b ? 1 : 0;
}

function putList(items: readonly number[]): void {
  put(items.length);
  for (const v of items) w[n++] = v;
}

/** A list with an entry per data partition from `offset` on, each moved to its partition's new place. */
function putPartitionList(items: readonly number[], offset = 0): void {
  if (perm === null) return putList(items);
  put(items.length);
  for (let i = 0; i < items.length; i++) {
    const q = i - offset;
    w[n++] = q >= 0 && q < perm.length ? items[offset + inverse[q]!]! : items[i]!;
  }
}

function putMask(mask: number): void {
  put(perm === null ? mask : renameMask(perm, mask));
}

function putPartitionIndex(p: number): void {
  put(perm === null ? p : renameIndex(perm, p));
}

function putNode(node: number): void {
  put(renamedNode(node));
}

function putClientTxn(c: number): void {
  put(ids === null ? c : ids.clientTxn(c));
}

function putPartitionsOf(api: number, partitions: number): void {
  put(perm === null ? partitions : renamePartitionsField(perm, api, partitions));
}

/**
 * Copies words `from .. to` of the last state unpacked: an actor a step left alone is packed as it
 * was unpacked. Writes past the end of `w` are dropped; packState refuses the state then.
 */
function copy(from: number, to: number): void {
  for (let i = from; i < to; i++) w[n++] = source[i]!;
}

function putMessage(m: Message): void {
  // An idempotent producer's messages name no transactional.id and are not renamed.
  const r = m.txnId >= 0 ? ids : null;
  put(m.api);
  put(r === null ? m.txnId : r.txnId(m.txnId));
  put(m.pid);
  put(m.epoch);
  putPartitionsOf(m.api, m.partitions);
  put(m.seq);
  put(m.coordinatorEpoch);
  if (m.response) {
    put(1);
    put(m.error);
    put(m.guard);
    return;
  }
  put(0);
  putBool(m.commit);
  put(m.value);
  put(m.generation);
  putBool(m.verifyOnly);
  put(m.guard);
  put(m.supports);
  if (r !== null) {
    put(r.producer(m.ghostProducer));
    // An idempotent producer's Produce names that producer in ghostTxn, not a client transaction.
    put(m.ghostProducer >= 0 ? r.clientTxnOf(m.ghostProducer, m.ghostTxn) : r.clientTxn(m.ghostTxn));
  } else {
    put(m.ghostProducer);
    put(m.ghostTxn);
  }
  put(m.ghostRecord);
}

function putBatch(b: ClientBatch): void {
  putPartitionIndex(b.partition);
  put(b.seq);
  put(b.status);
  putBool(b.retried);
  put(b.value);
  put(b.ghostRecord);
}

function putProducer(p: Producer): void {
  put(ids === null ? p.txnId : ids.txnId(p.txnId));
  put(ids === null ? p.instance : ids.instance(p.txnId, p.instance));
  put(p.status);
  put(p.tm);
  put(p.pid);
  put(p.epoch);
  putBool(p.bumpRequired);
  putBool(p.txnStarted);
  putMask(p.added);
  putMask(p.pendingAdd);
  if (p.request === null) put(-1);
  else {
    put(p.request.api);
    putPartitionsOf(p.request.api, p.request.partitions);
    putBool(p.request.commit);
  }
  putPartitionList(p.nextSeq);
  put(p.batches.length);
  for (const b of p.batches) putBatch(b);
  // Slot 0 is the coordinator, 1 + p leader p, the last one the group coordinator.
  putPartitionList(p.conns, 1);
  put(p.txnsBegun);
  put(p.recordsSent);
  put(p.generation);
  put(p.inputPosition);
  put(p.offsetToCommit);
  putBool(p.offsetsAdded);
  putBool(p.offsetsCommitted);
  put(p.ghostExcuses);
  put(p.ghostFatalError);
  putBool(p.transactionV2);
  putBool(p.nextTransactionV2);
}

function putIdempotentProducer(p: IdempotentProducer): void {
  put(p.pid);
  put(p.epoch);
  putBool(p.fatal);
  put(p.sequences.length);
  for (let i = 0; i < p.sequences.length; i++) {
    const q = p.sequences[perm === null || i >= perm.length ? i : inverse[i]!]!;
    put(q.pid);
    put(q.epoch);
    put(q.nextSeq);
    put(q.lastAcked);
  }
  put(p.batches.length);
  for (const b of p.batches) {
    putPartitionIndex(b.partition);
    put(b.status);
    put(b.pid);
    put(b.epoch);
    put(b.seq);
    putBool(b.retried);
    put(b.record);
  }
  putPartitionList(p.conns);
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
  putMask(md.partitions);
  putClientTxn(md.ghostTxn);
  putBool(md.hasFailedEpochFence);
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
  putMask(r.partitions);
  putClientTxn(r.ghostTxn);
  put(r.prevPid);
  put(r.nextPid);
  put(r.lastEpoch);
  put(r.transactionVersion);
  put(r.ghostPrevState);
  put(r.ghostPrevPid);
  put(r.ghostPrevEpoch);
}

function putAppend(a: TxnAppend): void {
  put(ids === null ? a.txnId : ids.txnId(a.txnId));
  putMetadata(a.transit);
  putBool(a.epochFence);
  putNode(a.from);
  put(a.conn);
  putBool(a.request !== null);
  if (a.request !== null) putMessage(a.request);
  putBool(a.response !== null);
  if (a.response !== null) putMessage(a.response);
}

function putCoordinator(c: Coordinator): void {
  put(c.epoch);
  putBool(c.loading);
  put(c.nextPid);
  put(c.metadata.length);
  if (ids === null) {
    for (const md of c.metadata) putMetadata(md);
    for (const r of c.log) putLogRecord(r);
    put(c.appends.length);
    for (const a of c.appends) putAppend(a);
  } else {
    // Entry t moves to the id t becomes; the appends stay sorted by id (coordinator.ts).
    for (let t = 0; t < c.metadata.length; t++) putMetadata(c.metadata[txnIdFrom[t]!]!);
    for (let t = 0; t < c.log.length; t++) putLogRecord(c.log[txnIdFrom[t]!]!);
    put(c.appends.length);
    for (const i of sortedIndices(c.appends, (a) => ids!.txnId(a.txnId))) putAppend(c.appends[i]!);
  }
  putPartitionList(c.markerConns);
}

function putLogBatch(b: LogBatch): void {
  put(b.kind);
  put(b.pid);
  put(b.epoch);
  put(b.seq);
  putBool(b.transactional);
  put(b.value);
  put(ids === null || !b.transactional ? b.ghostTxn : ids.clientTxn(b.ghostTxn));
  put(b.ghostRecord);
}

function putPartition(part: Partition): void {
  put(part.log.length);
  for (const b of part.log) putLogBatch(b);
  put(part.producers.length);
  for (const e of part.producers) {
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
    putBool(v.supportsEpochBump);
  }
  put(part.held.length);
  for (const h of part.held) {
    put(h.guard);
    // A held Produce comes from a producer: a leader's node is never there.
    put(ids === null ? h.from : ids.node(h.from));
    put(h.conn);
    putMessage(h.request);
  }
  put(part.nextGuard);
}

function putConsumer(c: Consumer): void {
  putBool(c.readCommitted);
  putPartitionList(c.position);
  put(c.delivered.length);
  for (const d of c.delivered) {
    putPartitionIndex(d.partition);
    put(d.offset);
    put(
      ids === null || !packing!.partitions[d.partition]!.log[d.offset]!.transactional
        ? d.ghostTxn
        : ids.clientTxn(d.ghostTxn),
    );
    put(d.ghostRecord);
  }
}

function putChannel(ch: Channel): void {
  putNode(ch.from);
  putNode(ch.to);
  put(ch.conn);
  put(ch.messages.length);
  for (const m of ch.messages) putMessage(m);
}

/**
 * Writes `s` into `words` and returns how many words it took; with `renaming` and `idRenaming`,
 * the words of `s` with its instances and transactional.ids, then its data partitions, renamed
 * (renamed-states.ts), without building that state.
 */
export function packState(
  s: State,
  words: Int32Array,
  renaming: Renaming | null = null,
  idRenaming: IdRenaming | null = null,
): number {
  w = words;
  n = 0;
  perm = renaming;
  if (renaming !== null) renaming.forEach((q, p) => (inverse[q] = p));
  ids = idRenaming;
  packing = idRenaming === null ? null : s;
  if (idRenaming !== null) {
    for (let i = 0; i < s.producers.length; i++) producerFrom[idRenaming.producer(i)] = i;
    for (let t = 0; t < s.coordinator.metadata.length; t++) txnIdFrom[idRenaming.txnId(t)] = t;
    for (let c = 0; c < s.history.length; c++) clientTxnFrom[idRenaming.clientTxn(c)] = c;
  }
  putHeader(s);
  if (idRenaming === null) putActors(s.producers, Kind.Producers, putProducer);
  else {
    put(s.producers.length);
    for (let i = 0; i < s.producers.length; i++) putProducer(s.producers[producerFrom[i]!]!);
  }
  putActors(s.idempotentProducers, Kind.IdempotentProducers, putIdempotentProducer);
  putActor(s.coordinator, Kind.Coordinator, 0, putCoordinator);
  if (renaming === null) putActors(s.partitions, Kind.Partitions, putPartition);
  else putRenamedPartitions(s.partitions);
  putActors(s.consumers, Kind.Consumers, putConsumer);
  if (renaming === null && idRenaming === null) putActors(s.network, Kind.Network, putChannel);
  else putRenamedNetwork(s.network);
  putActor(s.history, Kind.History, 0, putHistory);
  if (renaming === null && idRenaming === null && s === summarized)
    for (let k = 0; k < summarizedWords; k++) put(summarizedParts[k]!);
  packing = null;
  if (n > w.length) throw new RangeError(`a Kafka state needs more than ${w.length} packed words`);
  return n;
}

/** The words before the actors: the feature level, the group's generation and the fault budgets. */
function putHeader(s: State): void {
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
}

// ---- Fingerprints without packing (Model.fingerprint) -------------------------------------------
// A state's summary is its header's fingerprint, then per kind the number of actors and each
// actor's fingerprint, of the words packState writes for it. An actor a step left alone keeps the
// fingerprint its words got when it was unpacked, so a successor is hashed only where it changed,
// and only the states a search keeps are packed in full.

const actorWords = new Int32Array(PACK_WORDS);
const written = new Int32Array(2);
/** The fingerprints of the actors unpacked last, two words each, valid where stamped `unpacked`. */
let sourceFingerprints = new Int32Array(64);
const sourceStamps: number[] = [];
/** How many states unpackState has read: stamps the fingerprints of their actors. */
let unpacked = 0;

// The state summarized last and its parts' fingerprints, the header's then each actor's in the
// order unpackState meets them. When that state is packed next (a search keeps it), packState
// writes them after its words, so that expanding it later hashes none of its actors again.
let summarized: State | null = null;
let summarizedParts = new Int32Array(2 * 64);
let summarizedWords = 0;

/** `a`, or a copy of it twice as long (or `words` long) when it has fewer than `words`. */
function withRoom(a: Int32Array<ArrayBuffer>, words: number): Int32Array<ArrayBuffer> {
  if (a.length >= words) return a;
  const longer = new Int32Array(Math.max(words, a.length * 2));
  longer.set(a);
  return longer;
}

function keepPart(high: number, low: number): void {
  summarizedParts = withRoom(summarizedParts, summarizedWords + 2);
  summarizedParts[summarizedWords++] = high;
  summarizedParts[summarizedWords++] = low;
}

// The header summarized last, by the objects it was read from (a step that spends no fault keeps
// the budget object), and its fingerprint.
let headerFaults: FaultBudget | null = null;
let headerGroup: State['group'] = null;
let headerVersion = -1;
const headerFingerprint = new Int32Array(2);

function rememberHeader(s: State, high: number, low: number): void {
  headerFingerprint[0] = high;
  headerFingerprint[1] = low;
  headerFaults = s.faults;
  headerGroup = s.group;
  headerVersion = s.transactionVersion;
}

/** Adds the words `write` writes to `summary` as one part. */
function summarizeWritten<T>(x: T, write: (x: T) => void, summary: FingerprintSummary): void {
  w = actorWords;
  n = 0;
  write(x);
  if (n > w.length) throw new RangeError(`a Kafka actor needs more than ${w.length} packed words`);
  summary.part(actorWords, 0, n, written, 0);
  keepPart(written[0]!, written[1]!);
}

function summarizeActor<T>(
  x: T,
  kind: Kind,
  i: number,
  write: (x: T) => void,
  summary: FingerprintSummary,
): void {
  const j = sourceIndex(x, kind, i);
  if (j === -1) return summarizeWritten(x, write, summary);
  if (sourceStamps[j] !== unpacked) {
    sourceFingerprints = withRoom(sourceFingerprints, 2 * j + 2);
    summary.part(source, sourceStarts[j]!, sourceEnds[j]!, sourceFingerprints, 2 * j);
    sourceStamps[j] = unpacked;
  } else summary.known(sourceFingerprints[2 * j]!, sourceFingerprints[2 * j + 1]!);
  keepPart(sourceFingerprints[2 * j]!, sourceFingerprints[2 * j + 1]!);
}

/**
 * Takes the parts' fingerprints that packState wrote after the words of a state summarized just
 * before it was packed (the header's, then each actor's), from word `at` of the state unpacked.
 */
function takeParts(s: State, at: number, end: number): void {
  if (end - at !== 2 + 2 * sourceCount)
    throw new RangeError(
      `packed Kafka state: ${end - at} words after the state, expected ${2 + 2 * sourceCount}`,
    );
  rememberHeader(s, source[at]!, source[at + 1]!);
  sourceFingerprints = withRoom(sourceFingerprints, 2 * sourceCount);
  for (let j = 0; j < sourceCount; j++) {
    sourceFingerprints[2 * j] = source[at + 2 + 2 * j]!;
    sourceFingerprints[2 * j + 1] = source[at + 3 + 2 * j]!;
    sourceStamps[j] = unpacked;
  }
}

function summarizeActors<T>(
  items: readonly T[],
  kind: Kind,
  write: (x: T) => void,
  summary: FingerprintSummary,
): void {
  summary.word(items.length);
  for (let i = 0; i < items.length; i++) summarizeActor(items[i]!, kind, i, write, summary);
}

/** Describes `s` to `summary` (Model.fingerprint): equal packed words give equal summaries. */
export function fingerprintState(s: State, summary: FingerprintSummary): void {
  perm = null;
  ids = null;
  summarized = null;
  summarizedWords = 0;
  if (s.faults === headerFaults && s.group === headerGroup && s.transactionVersion === headerVersion) {
    summary.known(headerFingerprint[0]!, headerFingerprint[1]!);
    keepPart(headerFingerprint[0]!, headerFingerprint[1]!);
  } else {
    summarizeWritten(s, putHeader, summary);
    rememberHeader(s, written[0]!, written[1]!);
  }
  summarizeActors(s.producers, Kind.Producers, putProducer, summary);
  summarizeActors(s.idempotentProducers, Kind.IdempotentProducers, putIdempotentProducer, summary);
  summarizeActor(s.coordinator, Kind.Coordinator, 0, putCoordinator, summary);
  summarizeActors(s.partitions, Kind.Partitions, putPartition, summary);
  summarizeActors(s.consumers, Kind.Consumers, putConsumer, summary);
  summarizeActors(s.network, Kind.Network, putChannel, summary);
  summarizeActor(s.history, Kind.History, 0, putHistory, summary);
  summarized = s;
}

/** The partitions in their new places: place q holds old partition inverse[q]. */
function putRenamedPartitions(partitions: readonly Partition[]): void {
  put(partitions.length);
  for (let q = 0; q < partitions.length; q++) {
    const p = q < perm!.length ? inverse[q]! : q;
    putActor(partitions[p]!, Kind.Partitions, p, putPartition);
  }
}

function renamedNode(node: number): number {
  const renamed = ids === null ? node : ids.node(node);
  return perm === null ? renamed : renameNode(perm, renamed);
}

// A channel's renamed ends, and the channels' order by them: kept from call to call.
const channelFrom: number[] = [];
const channelTo: number[] = [];
const channelOrder: number[] = [];

/** The channels in the order of their renamed ends, as a state's network is kept (network.ts). */
function putRenamedNetwork(network: readonly Channel[]): void {
  // An insertion sort: the network is a few channels, mostly in order already.
  for (let i = 0; i < network.length; i++) {
    const ch = network[i]!;
    const from = renamedNode(ch.from);
    const to = renamedNode(ch.to);
    let j = i;
    for (; j > 0; j--) {
      const k = channelOrder[j - 1]!;
      const before = channelFrom[k]! - from || channelTo[k]! - to || network[k]!.conn - ch.conn;
      if (before <= 0) break;
      channelOrder[j] = k;
    }
    channelOrder[j] = i;
    channelFrom[i] = from;
    channelTo[i] = to;
  }
  put(network.length);
  for (let i = 0; i < network.length; i++) putChannel(network[channelOrder[i]!]!);
}

/** The indices of `items` sorted by `key`, equal keys in their order. */
function sortedIndices<T>(items: readonly T[], key: (x: T) => number): number[] {
  const keys = items.map(key);
  return items.map((_, i) => i).sort((i, j) => keys[i]! - keys[j]! || i - j);
}

function putHistory(history: readonly ClientTxnHistory[]): void {
  put(history.length);
  for (let c = 0; c < history.length; c++) {
    const h = history[ids === null ? c : clientTxnFrom[c]!]!;
    put(h.decision);
    put(h.told);
    put(h.recordsSent);
    putBool(h.prepared);
    putBool(h.fenced);
    putBool(h.expired);
  }
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

let sourceCount = 0;

/** Reads one actor of `kind` and remembers where its words are, for putActor. */
function actor<T>(read: () => T): T {
  const start = at;
  const x = read();
  sourceActors[sourceCount] = x;
  sourceStarts[sourceCount] = start;
  sourceEnds[sourceCount++] = at;
  return x;
}

function actors<T>(kind: Kind, read: () => T): T[] {
  kindFirst[kind] = sourceCount;
  const length = num();
  const out = new Array<T>(length);
  for (let i = 0; i < length; i++) out[i] = actor(read);
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
    ghostFatalError: num() as Err,
    transactionV2: bool(),
    nextTransactionV2: bool(),
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
  const metadata = new Array<TxnMetadata | null>(ids);
  for (let i = 0; i < ids; i++) metadata[i] = readMetadata();
  const log = new Array<TxnLogRecord | null>(ids);
  for (let i = 0; i < ids; i++) log[i] = readLogRecord();
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

function readHistory(): ClientTxnHistory[] {
  return list<ClientTxnHistory>(() => ({
    decision: num() as Decision,
    told: num() as Told,
    recordsSent: num(),
    prepared: bool(),
    fenced: bool(),
    expired: bool(),
  }));
}

function readChannel(): Channel {
  return { from: num(), to: num(), conn: num(), messages: list(readMessage) };
}

/** The state `packState` wrote as `words`. */
export function unpackState(words: Int32Array): State {
  // A copy: the caller may reuse its words while successors of this state are packed.
  if (source.length < words.length) source = new Int32Array(Math.max(words.length, 2 * source.length));
  source.set(words);
  r = source;
  at = 0;
  sourceCount = 0;
  unpacked++;
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
  const producers = actors(Kind.Producers, readProducer);
  const idempotentProducers = actors(Kind.IdempotentProducers, readIdempotentProducer);
  kindFirst[Kind.Coordinator] = sourceCount;
  const coordinator = actor(readCoordinator);
  const partitions = actors(Kind.Partitions, readPartition);
  const consumers = actors(Kind.Consumers, readConsumer);
  const network = actors(Kind.Network, readChannel);
  kindFirst[Kind.History] = sourceCount;
  const history = actor(readHistory);
  kindFirst[Kind.End] = sourceCount;
  const s: State = {
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
  if (at < words.length) takeParts(s, at, words.length);
  return s;
}
