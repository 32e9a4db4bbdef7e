// Symmetry reduction for the Kafka model: the data partitions are interchangeable, and so are the
// transactional.ids and, once all have started, the instances of an id. Nothing in the protocol,
// the producers' choices (a record may go to any partition) or the safety properties singles one
// out, so a state stands for every state that renames them. The group's __consumer_offsets
// partition (after the data partitions with the transform app) is not renamed; idempotent
// producers are not renamed either. What each renaming changes is defined on states in
// renamed-states.ts; packState writes the same words without building the renamed state.
//
// The representative: for every renaming of the transactional.ids and instances that sorts them by
// signature, and every renaming of the data partitions that sorts theirs (a partition's signature
// is a hash of what the state says about it alone, and reads nothing a renaming of ids changes),
// the state is packed under the renamings, and the least words (compared word by word) are the
// representative. The candidate set is the same for every member of a class, so the choice is
// canonical; hash collisions only add candidates.
import type { KafkaConfig } from './config.ts';
import { PACK_WORDS } from '../../checker/engine/model.ts';
import { isProducerNode } from './network.ts';
import { packState, unpackState } from './pack.ts';
import { IdRenaming, type Renaming, partitionsKind } from './renaming.ts';
import { type State, IDEMPOTENT_BASE, Instance, LEADER_BASE } from './state.ts';

export type { Renaming } from './renaming.ts';

/**
 * A hash per transactional.id of what the state says about it alone (its coordinator entries, its
 * instances, its client transactions), the same for id perm[t] of the renamed state and under
 * any renaming of partitions.
 */
function idSignatures(
  cfg: KafkaConfig,
  s: State,
  swappable: readonly boolean[] = [],
  instances: readonly (readonly number[])[] = instanceSignatures(cfg, s),
): number[] {
  const sig = new Array<number>(cfg.transactionalIds).fill(0x811c9dc5);
  for (let t = 0; t < cfg.transactionalIds; t++) {
    const md = s.coordinator.metadata[t];
    const r = s.coordinator.log[t];
    // Partition sets by their size only: a renaming of partitions must leave the signature alone.
    let h =
      md === null || md === undefined
        ? 1
        : mix(mix(mix(mix(mix(2, md.pid), md.epoch), md.state), md.pendingState), popcount(md.partitions));
    h =
      r === null || r === undefined
        ? mix(h, 3)
        : mix(mix(mix(mix(h, r.pid), r.epoch), r.state), popcount(r.partitions));
    sig[t] = h;
  }
  // The instances of an id whose instances are interchangeable are taken in the order of their
  // own signatures, so that renaming them leaves the id's signature alone.
  instances.forEach((hashes, t) => {
    const ordered =
      swappable[t] === true ? hashes.slice().sort((x, y) => x - y) : hashes.map((h, k) => mix(h, k));
    for (const h of ordered) sig[t] = mix(sig[t]!, h);
  });
  return sig;
}

/**
 * Per transactional.id, a hash per instance of what the state says about that instance alone
 * (its client state and its client transactions), the same for the instance it becomes under a
 * renaming of instances, and under any renaming of partitions.
 */
function instanceSignatures(cfg: KafkaConfig, s: State): number[][] {
  const perInstance = cfg.transactionsPerInstance;
  const out: number[][] = Array.from({ length: cfg.transactionalIds }, () => []);
  s.producers.forEach((p, i) => {
    let h = mix(
      mix(mix(mix(mix(mix(0x811c9dc5, p.status), p.tm), p.pid), p.epoch), p.txnsBegun),
      p.recordsSent,
    );
    for (let c = 0; c < perInstance; c++) {
      const entry = s.history[i * perInstance + c]!;
      h = mix(mix(mix(h, entry.decision), entry.told), entry.recordsSent);
    }
    out[p.txnId]!.push(h);
  });
  return out;
}

// ---- The representative -----------------------------------------------------------------------

function mix(h: number, v: number): number {
  h = Math.imul(h ^ v, 0x01000193);
  return h ^ (h >>> 15);
}

/** The size of a set of partitions: what a renaming preserves of it. */
function popcount(mask: number): number {
  let n = 0;
  for (let m = mask; m !== 0; m &= m - 1) n++;
  return n;
}

/** The partitions a message or request slot names, as a bitmask. */
function named(api: number, partitions: number): number {
  const kind = partitionsKind(api);
  return kind === 1 ? partitions : kind === 2 ? 1 << partitions : 0;
}

/**
 * A hash of what `s` says about data partition p on its own, such that partition perm[p] of
 * renamePartitions(s, perm) has the same one, and so has partition p of the state with its
 * transactional.ids or instances renamed (what each producer, id or channel adds is summed, in no
 * order, and names no id, instance or client transaction); and the set of partitions the state
 * mentions at all. Two partitions it does not mention are alike: swapping them changes nothing.
 */
function signatures(s: State, partitions: number): { sig: number[]; touched: number } {
  const sig = new Array<number>(partitions).fill(0x811c9dc5);
  let touched = 0;
  for (let p = 0; p < partitions; p++) {
    const part = s.partitions[p]!;
    if (
      part.log.length +
        part.producers.length +
        part.verifications.length +
        part.held.length +
        part.nextGuard !==
      0
    )
      touched |= 1 << p;
    let h = mix(sig[p]!, part.log.length);
    for (const b of part.log) h = mix(mix(mix(mix(h, b.kind), b.pid), b.epoch), mix(b.seq, b.ghostRecord));
    for (const e of part.producers) h = mix(mix(mix(h, e.pid), e.epoch), e.txnFirstOffset);
    h = mix(mix(mix(h, part.verifications.length), part.held.length), part.nextGuard);
    sig[p] = h;
  }
  const sum = new Array<number>(partitions).fill(0);
  const own = new Array<number>(partitions);
  for (const pr of s.producers) {
    for (let p = 0; p < partitions; p++) {
      const flags = ((pr.added >>> p) & 1) | (((pr.pendingAdd >>> p) & 1) << 1);
      own[p] = mix(mix(mix(0x811c9dc5, flags), pr.nextSeq[p]!), pr.conns[1 + p]!);
      if (pr.nextSeq[p] !== 0 || pr.conns[1 + p] !== 0) touched |= 1 << p;
    }
    touched |=
      pr.added | pr.pendingAdd | (pr.request === null ? 0 : named(pr.request.api, pr.request.partitions));
    for (const b of pr.batches) {
      touched |= 1 << b.partition;
      if (b.partition < partitions) own[b.partition] = mix(mix(own[b.partition]!, b.status), b.seq);
    }
    for (let p = 0; p < partitions; p++) sum[p] = (sum[p]! + own[p]!) | 0;
  }
  for (let p = 0; p < partitions; p++) sig[p] = mix(sig[p]!, sum[p]!);
  for (const pr of s.idempotentProducers) {
    for (let p = 0; p < partitions; p++) {
      const q = pr.sequences[p]!;
      sig[p] = mix(mix(mix(mix(sig[p]!, q.epoch), q.nextSeq), q.lastAcked), pr.conns[p]!);
      if (q.pid !== -1 || pr.conns[p] !== 0) touched |= 1 << p;
    }
    for (const b of pr.batches) {
      touched |= 1 << b.partition;
      sig[b.partition] = mix(mix(mix(sig[b.partition]!, b.status), b.seq), b.record);
    }
  }
  const c = s.coordinator;
  sum.fill(0);
  for (let t = 0; t < c.metadata.length; t++) {
    const inMemory = c.metadata[t]?.partitions ?? 0;
    const logged = c.log[t]?.partitions ?? 0;
    touched |= inMemory | logged;
    for (let p = 0; p < partitions; p++)
      sum[p] = (sum[p]! + mix(0x811c9dc5, ((inMemory >>> p) & 1) * 2 + ((logged >>> p) & 1))) | 0;
  }
  for (let p = 0; p < partitions; p++) sig[p] = mix(sig[p]!, sum[p]!);
  for (const consumer of s.consumers) {
    for (let p = 0; p < partitions; p++) {
      sig[p] = mix(sig[p]!, consumer.position[p]!);
      if (consumer.position[p] !== 0) touched |= 1 << p;
    }
    for (const d of consumer.delivered) {
      touched |= 1 << d.partition;
      if (d.partition < partitions) sig[d.partition] = mix(sig[d.partition]!, d.offset);
    }
  }
  sum.fill(0);
  for (const ch of s.network) {
    const from = ch.from - LEADER_BASE;
    const to = ch.to - LEADER_BASE;
    let h = 0x811c9dc5;
    // A message's one partition is the leader's own; a set is told by its size only.
    for (const m of ch.messages) {
      h = mix(
        mix(h, m.api),
        (m.response ? 1 : 0) + 2 * (partitionsKind(m.api) === 1 ? popcount(m.partitions) : 0),
      );
      touched |= named(m.api, m.partitions);
    }
    if (from >= 0 && from < partitions) {
      sum[from] = (sum[from]! + mix(mix(mix(0x811c9dc5, 1), otherEnd(ch.to)), mix(ch.conn, h))) | 0;
      touched |= 1 << from;
    }
    if (to >= 0 && to < partitions) {
      sum[to] = (sum[to]! + mix(mix(mix(0x811c9dc5, 2), otherEnd(ch.from)), mix(ch.conn, h))) | 0;
      touched |= 1 << to;
    }
  }
  for (let p = 0; p < partitions; p++) sig[p] = mix(sig[p]!, sum[p]!);
  return { sig, touched };
}

/** The other end of a leader's channel, as far as renamings leave it alone: a producer instance or a leader by kind only. */
function otherEnd(node: number): number {
  return isProducerNode(node) ? -1 : node >= LEADER_BASE && node < IDEMPOTENT_BASE ? -2 : node;
}

function compareWords(a: Int32Array, n: number, b: Int32Array, m: number): number {
  for (let i = 0; i < n && i < m; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return n - m;
}

/**
 * The least of the packed candidates offered, in the order of compareWords, and whether it is the
 * state's own words (no renaming). Each candidate is packed straight into the scratch words,
 * renamed on the way (packState with renamings), without building the renamed state.
 */
class Least {
  words = new Int32Array(PACK_WORDS);
  length = 0;
  own = false;
  private scratch = new Int32Array(PACK_WORDS);

  reset(): void {
    this.length = 0;
  }

  offer(s: State, perm: Renaming | null, ids: IdRenaming | null): void {
    const n = packState(s, this.scratch, perm, ids);
    if (this.length > 0 && compareWords(this.scratch, n, this.words, this.length) >= 0) return;
    [this.words, this.scratch] = [this.scratch, this.words];
    this.length = n;
    this.own = perm === null && ids === null;
  }
}

/**
 * Every ordering of `items` that keeps `key` non-decreasing: the ties are tried in every order,
 * but for ties among partitions outside `touched`, whose order makes no difference.
 */
function sortedOrders(
  items: readonly number[],
  { sig: key, touched }: { sig: readonly number[]; touched: number },
): number[][] {
  // An insertion sort, stable like Array.prototype.sort: the lists are a few items long, and this
  // runs for every state a search meets.
  const sorted = items.slice();
  let ties = false;
  for (let i = 1; i < sorted.length; i++) {
    const x = sorted[i]!;
    let j = i;
    for (; j > 0 && key[sorted[j - 1]!]! > key[x]!; j--) sorted[j] = sorted[j - 1]!;
    sorted[j] = x;
    if (j > 0 && key[sorted[j - 1]!] === key[x]) ties = true;
  }
  if (!ties) return [sorted];
  let orders: number[][] = [[]];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j < sorted.length && key[sorted[j]!] === key[sorted[i]!]) j++;
    const tied = sorted.slice(i, j);
    const group = tied.every((p) => (touched & (1 << p)) === 0) ? [tied] : permutations(tied);
    orders = orders.flatMap((o) => group.map((g) => [...o, ...g]));
    i = j;
  }
  return orders;
}

/** The orders of the data partitions `indices` that sort their signatures in `s`. */
function partitionOrders(s: State, indices: readonly number[]): number[][] {
  return sortedOrders(indices, signatures(s, indices.length));
}

/** The orders of the transactional.ids `ids` that sort their signatures in `s` (every id counts as touched). */
function idOrders(
  cfg: KafkaConfig,
  s: State,
  ids: readonly number[],
  swappable: readonly boolean[] = [],
  instances?: readonly (readonly number[])[],
): number[][] {
  if (ids.length === 1) return [ids.slice()];
  return sortedOrders(ids, {
    sig: idSignatures(cfg, s, swappable, instances),
    touched: (1 << ids.length) - 1,
  });
}

/**
 * Whether each transactional.id's instances are interchangeable in `s`: the id has more than one,
 * they run the same client, and all have started, so that none waits for another to start (the
 * one rule that tells instances apart; canStart). Under the start rules a renaming keeps this.
 */
function instanceSwappability(cfg: KafkaConfig, s: State): boolean[] {
  const swappable = new Array<boolean>(cfg.transactionalIds).fill(true);
  for (const p of s.producers) if (p.status === Instance.NotStarted) swappable[p.txnId] = false;
  return swappable;
}

/** Whether every instance runs the same client: without it no renaming of instances is a symmetry. */
function sameClients(cfg: KafkaConfig): boolean {
  const first = JSON.stringify(cfg.clientRules[0]);
  return cfg.clientRules.every((r) => JSON.stringify(r) === first);
}

/**
 * The orders canonical tries for `s`, of its data partitions and of its transactional.ids. A field
 * the signatures leave out shows as a tie, and as more orders.
 */
export function candidateOrders(
  cfg: KafkaConfig,
  s: State,
): { partitions: number[][]; transactionalIds: number[][] } {
  return {
    partitions: partitionOrders(
      s,
      Array.from({ length: cfg.partitions }, (_, p) => p),
    ),
    transactionalIds: idOrders(
      cfg,
      s,
      Array.from({ length: cfg.transactionalIds }, (_, t) => t),
    ),
  };
}

export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  return items.flatMap((x, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest]),
  );
}

/**
 * The packed words of a state's representative under renamings of the transactional.ids, of the
 * instances of an id once they have all started (unless `instances` is false), and of the data
 * partitions, written into `words`; their count, negated when they are the state's own words
 * (Model.packCanonical). With `bySignature` false every renaming of ids and partitions is a
 * candidate (the plain minimum).
 */
export function kafkaPackCanonical(
  cfg: KafkaConfig,
  bySignature = true,
  instances = true,
): (s: State, words: Int32Array) => number {
  const partitionIndices = Array.from({ length: cfg.partitions }, (_, p) => p);
  const allPartitionOrders = permutations(partitionIndices);
  const partitionOrdersOf = (s: State): number[][] =>
    cfg.partitions <= 1
      ? [partitionIndices]
      : bySignature
        ? partitionOrders(s, partitionIndices)
        : allPartitionOrders;
  const least = new Least();
  const renamesInstances = instances && cfg.instancesPerId > 1 && sameClients(cfg);
  const renamesIds = cfg.transactionalIds > 1 || renamesInstances;
  const ids = Array.from({ length: cfg.transactionalIds }, (_, t) => t);
  const allOrders = permutations(ids);
  const instanceIndices = Array.from({ length: cfg.instancesPerId }, (_, k) => k);
  const allInstanceOrders = permutations(instanceIndices);
  // The renamings an order stands for, built once: orders repeat from state to state.
  const renamingsByOrder = new Map<number, Renaming | null>();
  const renamingFor = (order: readonly number[]): Renaming | null => {
    const key = orderKey(order);
    let renaming = renamingsByOrder.get(key);
    if (renaming === undefined) renamingsByOrder.set(key, (renaming = renamingOf(order)));
    return renaming;
  };
  const instanceRenamingsByOrder = new Map<number, IdRenaming | null>();
  return (s, words) => {
    const partitionRenamings = partitionOrdersOf(s).map(renamingFor);
    const byIds = idRenamings(s);
    // One candidate, the common case: its words go straight where they are wanted.
    if (byIds.length === 1 && partitionRenamings.length === 1) {
      const perm = partitionRenamings[0]!;
      const n = packState(s, words, perm, byIds[0]!);
      return perm === null && byIds[0] === null ? -n : n;
    }
    least.reset();
    for (const idRenaming of byIds) for (const perm of partitionRenamings) least.offer(s, perm, idRenaming);
    words.set(least.words.subarray(0, least.length));
    return least.own ? -least.length : least.length;
  };

  /** The renamings of transactional.ids and instances that sort them by signature (null: none). */
  function idRenamings(s: State): (IdRenaming | null)[] {
    if (!renamesIds) return [null];
    const swappable = renamesInstances ? instanceSwappability(cfg, s) : [];
    if (cfg.transactionalIds === 1) {
      // One transactional.id: only its instances, once all have started, are renamed.
      if (swappable[0] !== true) return [null];
      const orders = bySignature
        ? sortedOrders(instanceIndices, { sig: instanceSignatures(cfg, s)[0]!, touched: -1 })
        : allInstanceOrders;
      return orders.map((order) => {
        const key = orderKey(order);
        let renaming = instanceRenamingsByOrder.get(key);
        if (renaming === undefined) {
          const instanceRenaming = renamingOf(order);
          renaming = instanceRenaming === null ? null : new IdRenaming(cfg, ids, [instanceRenaming]);
          instanceRenamingsByOrder.set(key, renaming);
        }
        return renaming;
      });
    }
    const signatures = instanceSignatures(cfg, s);
    // As for partitions: only the renamings that sort the transactional.ids by signature are candidates.
    const orders = bySignature ? idOrders(cfg, s, ids, swappable, signatures) : allOrders;
    // As for ids: the renamings of each interchangeable id's instances that sort them by signature.
    let instanceRenamings: (Renaming | null)[][] = [[]];
    if (renamesInstances) {
      swappable.forEach((swaps, t) => {
        if (!swaps) return;
        const instanceOrders = bySignature
          ? sortedOrders(instanceIndices, { sig: signatures[t]!, touched: -1 })
          : allInstanceOrders;
        instanceRenamings = instanceRenamings.flatMap((r) =>
          instanceOrders.map((order) => {
            const next = r.slice();
            next[t] = renamingOf(order);
            return next;
          }),
        );
      });
    }
    return instanceRenamings.flatMap((instanceRenaming) =>
      orders.map((order) => {
        const perm = renamingOf(order);
        return perm === null && instanceRenaming.every((r) => r === null)
          ? null
          : new IdRenaming(cfg, perm ?? ids, instanceRenaming);
      }),
    );
  }
}

/**
 * The representative of a state's class, as a state (kafkaPackCanonical's words unpacked; `s`
 * itself when it is its own).
 */
export function kafkaCanonical(cfg: KafkaConfig, bySignature = true, instances = true): (s: State) => State {
  const packCanonical = kafkaPackCanonical(cfg, bySignature, instances);
  const words = new Int32Array(PACK_WORDS);
  return (s) => {
    const n = packCanonical(s, words);
    return n < 0 ? s : unpackState(words.subarray(0, n));
  };
}

/** A number for an order of a few indices (under 16 of them), for looking its renaming up. */
function orderKey(order: readonly number[]): number {
  let key = 0;
  for (const x of order) key = key * 16 + x;
  return key;
}

/** The renaming that puts old order[q] in place q, or null when it renames nothing. */
function renamingOf(order: readonly number[]): Renaming | null {
  const perm = new Array<number>(order.length);
  let identity = true;
  order.forEach((p, q) => {
    perm[p] = q;
    if (p !== q) identity = false;
  });
  return identity ? null : perm;
}
