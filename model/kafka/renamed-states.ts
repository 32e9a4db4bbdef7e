// The renamings of a Kafka state, as functions on states: of the data partitions, and of the
// transactional.ids and their instances. They define what symmetry.ts renames: the tests' oracle
// applies them, and packState's words under a renaming are checked against them
// (symmetry-walks.test.ts).
//
// A renaming of partitions is applied everywhere a data partition appears: the partitions array,
// each producer's bitmasks (added, pendingAdd, its in-flight request), nextSeq, its connections to
// the leaders and its batches, each idempotent producer's sequences, connections and batches, the
// coordinator's transaction partition sets (memory and log), the consumers' positions and
// deliveries, the leaders' nodes in the network (channels re-sorted by (from, to, conn)) and every
// message that names partitions (a bitmask for AddPartitionsToTxn and AddOffsetsToTxn, one
// partition for Produce, WriteTxnMarkers and TxnOffsetCommit), the requests a leader holds and the
// coordinator's appends in flight included, and the marker channel's connection to each leader.
//
// A renaming of transactional.ids moves each id's block of producer instances (their nodes in the
// network included), the coordinator's metadata and log entries, its appends in flight, and the
// client transactions of the ghost history, wherever a message, a log batch, a delivery or the
// coordinator names one; a renaming of instances moves them within their id's block the same way.
// The kinds of renaming touch disjoint parts and commute.
import type { KafkaConfig } from './config.ts';
import {
  IdRenaming,
  type Renaming,
  renameIndex,
  renameMask,
  renameNode,
  renamePartitionsField,
} from './renaming.ts';
import {
  type Channel,
  type Consumer,
  type Coordinator,
  type IdempotentProducer,
  type Message,
  type Partition,
  type Producer,
  type State,
  type TxnRequestSlot,
} from './state.ts';

function renameMessage<M extends Message | TxnRequestSlot>(perm: Renaming, m: M): M {
  const partitions = renamePartitionsField(perm, m.api, m.partitions);
  return partitions === m.partitions ? m : { ...m, partitions };
}

/** `items` with entry p moved to perm[p] (entries past the renamed ones stay); `items` itself when that changes nothing. */
function moveEntries<T>(perm: Renaming, items: readonly T[], offset = 0): readonly T[] {
  let moved = false;
  for (let p = 0; p < perm.length && !moved; p++) moved = items[offset + perm[p]!] !== items[offset + p];
  if (!moved) return items;
  const out = items.slice();
  for (let p = 0; p < perm.length; p++) out[offset + perm[p]!] = items[offset + p]!;
  return out;
}

function renameProducer(perm: Renaming, p: Producer): Producer {
  const nextSeq = moveEntries(perm, p.nextSeq);
  // Slot 0 is the coordinator, 1 + p leader p, the last one the group coordinator.
  const conns = moveEntries(perm, p.conns, 1);
  const request = p.request === null ? null : renameMessage(perm, p.request);
  if (
    p.added === 0 &&
    p.pendingAdd === 0 &&
    request === p.request &&
    nextSeq === p.nextSeq &&
    conns === p.conns &&
    p.batches.length === 0
  )
    return p;
  return {
    ...p,
    added: renameMask(perm, p.added),
    pendingAdd: renameMask(perm, p.pendingAdd),
    request,
    nextSeq,
    batches: p.batches.map((b) => ({ ...b, partition: renameIndex(perm, b.partition) })),
    conns,
  };
}

function renameIdempotentProducer(perm: Renaming, p: IdempotentProducer): IdempotentProducer {
  const sequences = moveEntries(perm, p.sequences);
  const conns = moveEntries(perm, p.conns);
  if (sequences === p.sequences && conns === p.conns && p.batches.length === 0) return p;
  return {
    ...p,
    sequences,
    conns,
    batches: p.batches.map((b) => ({ ...b, partition: renameIndex(perm, b.partition) })),
  };
}

function renameCoordinator(perm: Renaming, c: Coordinator): Coordinator {
  const markerConns = moveEntries(perm, c.markerConns);
  if (
    markerConns === c.markerConns &&
    c.appends.length === 0 &&
    c.metadata.every((md) => md === null || md.partitions === 0) &&
    c.log.every((r) => r === null || r.partitions === 0)
  )
    return c;
  return {
    ...c,
    metadata: c.metadata.map((md) =>
      md === null || md.partitions === 0 ? md : { ...md, partitions: renameMask(perm, md.partitions) },
    ),
    log: c.log.map((r) =>
      r === null || r.partitions === 0 ? r : { ...r, partitions: renameMask(perm, r.partitions) },
    ),
    markerConns,
    // An append in flight: its transition's partitions, the request it answers, that answer and
    // the node it goes to (a leader adding its partition under transaction version 2).
    appends: c.appends.map((a) => ({
      ...a,
      from: renameNode(perm, a.from),
      transit: { ...a.transit, partitions: renameMask(perm, a.transit.partitions) },
      request: a.request === null ? null : renameMessage(perm, a.request),
      response: a.response === null ? null : renameMessage(perm, a.response),
    })),
  };
}

function renamePartition(perm: Renaming, part: Partition): Partition {
  if (part.held.length === 0) return part;
  return { ...part, held: part.held.map((h) => ({ ...h, request: renameMessage(perm, h.request) })) };
}

function renameConsumer(perm: Renaming, c: Consumer): Consumer {
  const position = moveEntries(perm, c.position);
  if (position === c.position && c.delivered.length === 0) return c;
  return {
    ...c,
    position,
    delivered: c.delivered.map((d) => ({ ...d, partition: renameIndex(perm, d.partition) })),
  };
}

function compareChannels(a: Channel, b: Channel): number {
  return a.from - b.from || a.to - b.to || a.conn - b.conn;
}

function renameNetwork(perm: Renaming, network: readonly Channel[]): Channel[] {
  return network
    .map((ch) => ({
      ...ch,
      from: renameNode(perm, ch.from),
      to: renameNode(perm, ch.to),
      messages: ch.messages.map((m) => renameMessage(perm, m)),
    }))
    .sort(compareChannels);
}

/** `s` with data partition p renamed perm[p] everywhere. */
export function renamePartitions(s: State, perm: Renaming): State {
  return {
    ...s,
    producers: s.producers.map((p) => renameProducer(perm, p)),
    idempotentProducers: s.idempotentProducers.map((p) => renameIdempotentProducer(perm, p)),
    coordinator: renameCoordinator(perm, s.coordinator),
    partitions: moveEntries(
      perm,
      s.partitions.map((part) => renamePartition(perm, part)),
    ),
    consumers: s.consumers.map((c) => renameConsumer(perm, c)),
    network: renameNetwork(perm, s.network),
  };
}

// ---- Renaming transactional.ids -------------------------------------------------------------------

function renameIdsInMessage<M extends Message>(r: IdRenaming, m: M): M {
  if (m.txnId < 0) return m;
  const txnId = r.txnId(m.txnId);
  if (m.response) return txnId === m.txnId ? m : { ...m, txnId };
  // An idempotent producer's Produce names that producer in ghostTxn, not a client transaction.
  const ghostTxn =
    m.ghostProducer >= 0 ? r.clientTxnOf(m.ghostProducer, m.ghostTxn) : r.clientTxn(m.ghostTxn);
  const ghostProducer = r.producer(m.ghostProducer);
  if (txnId === m.txnId && ghostTxn === m.ghostTxn && ghostProducer === m.ghostProducer) return m;
  return { ...m, txnId, ghostProducer, ghostTxn };
}

/** `items` mapped by `f`; `items` itself when `f` changes none (a renaming leaves most parts alone). */
function mapSame<T>(items: readonly T[], f: (item: T) => T): readonly T[] {
  let out: T[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const next = f(item);
    if (next !== item && out === null) out = items.slice(0, i);
    if (out !== null) out.push(next);
  }
  return out ?? items;
}

function moved<T>(items: readonly T[], to: (i: number) => number): T[] {
  const out = items.slice();
  items.forEach((item, i) => (out[to(i)] = item));
  return out;
}

/** `s` with transactional.id t renamed perm[t] everywhere. */
export function renameTransactionalIds(cfg: KafkaConfig, s: State, perm: Renaming): State {
  return renameProducers(cfg, s, new IdRenaming(cfg, perm));
}

/**
 * `s` with instance k of transactional.id t renamed instances[t][k] everywhere (null: the id's
 * instances stay). A model step tells instances apart only by which may start after which, so
 * this is a symmetry of the states where every instance of each renamed id has started
 * (instanceSwappable).
 */
export function renameInstances(cfg: KafkaConfig, s: State, instances: readonly (Renaming | null)[]): State {
  const ids = Array.from({ length: cfg.transactionalIds }, (_, t) => t);
  return renameProducers(cfg, s, new IdRenaming(cfg, ids, instances));
}

/** A coordinator entry naming a client transaction, renamed; the entry itself when that changes nothing. */
function renameMetadata<T extends { ghostTxn: number } | null>(r: IdRenaming, md: T): T {
  if (md === null) return md;
  const ghostTxn = r.clientTxn(md.ghostTxn);
  return ghostTxn === md.ghostTxn ? md : { ...md, ghostTxn };
}

function renameBatch(r: IdRenaming, b: State['partitions'][number]['log'][number]) {
  if (!b.transactional) return b;
  const ghostTxn = r.clientTxn(b.ghostTxn);
  return ghostTxn === b.ghostTxn ? b : { ...b, ghostTxn };
}

function renameProducers(cfg: KafkaConfig, s: State, r: IdRenaming): State {
  const c = s.coordinator;
  const coordinator: Coordinator = {
    ...c,
    metadata: moved(
      mapSame(c.metadata, (md) => renameMetadata(r, md)),
      (t) => r.txnId(t),
    ),
    log: moved(
      mapSame(c.log, (md) => renameMetadata(r, md)),
      (t) => r.txnId(t),
    ),
    appends: c.appends
      .map((a) => ({
        ...a,
        txnId: r.txnId(a.txnId),
        transit: renameMetadata(r, a.transit),
        from: r.node(a.from),
        request: a.request === null ? null : renameIdsInMessage(r, a.request),
        response: a.response === null ? null : renameIdsInMessage(r, a.response),
      }))
      .sort((x, y) => x.txnId - y.txnId),
  };
  const partitions = mapSame(s.partitions, (part) => {
    const log = mapSame(part.log, (b) => renameBatch(r, b));
    const held = mapSame(part.held, (h) => {
      const from = r.node(h.from);
      const request = renameIdsInMessage(r, h.request);
      return from === h.from && request === h.request ? h : { ...h, from, request };
    });
    return log === part.log && held === part.held ? part : { ...part, log, held };
  });
  const consumers = mapSame(s.consumers, (consumer) => {
    const delivered = mapSame(consumer.delivered, (d) => {
      if (!s.partitions[d.partition]!.log[d.offset]!.transactional) return d;
      const ghostTxn = r.clientTxn(d.ghostTxn);
      return ghostTxn === d.ghostTxn ? d : { ...d, ghostTxn };
    });
    return delivered === consumer.delivered ? consumer : { ...consumer, delivered };
  });
  const network = s.network
    .map((ch) => {
      const from = r.node(ch.from);
      const to = r.node(ch.to);
      const messages = mapSame(ch.messages, (m) => renameIdsInMessage(r, m));
      return from === ch.from && to === ch.to && messages === ch.messages
        ? ch
        : { ...ch, from, to, messages };
    })
    .sort(compareChannels);
  const producers = s.producers.map((p, i) => {
    const txnId = r.txnId(p.txnId);
    const instance = r.producer(i) % cfg.instancesPerId;
    return txnId === p.txnId && instance === p.instance ? p : { ...p, txnId, instance };
  });
  return {
    ...s,
    producers: moved(producers, (i) => r.producer(i)),
    coordinator,
    partitions,
    consumers,
    network,
    history: moved(s.history, (c) => r.clientTxn(c)),
  };
}
