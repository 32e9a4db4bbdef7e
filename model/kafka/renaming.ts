// Renamings of the data partitions and of the transactional.ids and their instances, as each
// field that names one sees them: shared by the renaming of states (renamed-states.ts) and the
// packing of a state under a renaming (pack.ts), which must agree word for word.
import type { KafkaConfig } from './config.ts';
import { isProducerNode } from './network.ts';
import { Api, LEADER_BASE } from './state.ts';

/** A renaming of the data partitions: partition p becomes perm[p]. */
export type Renaming = readonly number[];

export function renameIndex(perm: Renaming, p: number): number {
  return p < perm.length ? perm[p]! : p;
}

export function renameMask(perm: Renaming, mask: number): number {
  const low = (1 << perm.length) - 1;
  let out = mask & ~low;
  for (let p = 0; p < perm.length; p++) if ((mask & (1 << p)) !== 0) out |= 1 << perm[p]!;
  return out;
}

/** A leader's node moves with its partition; every other node keeps its number. */
export function renameNode(perm: Renaming, node: number): number {
  const p = node - LEADER_BASE;
  return p >= 0 && p < perm.length ? LEADER_BASE + perm[p]! : node;
}

/** How a message or request slot carries partitions: 1 a bitmask, 2 one partition, 0 none. */
export function partitionsKind(api: number): 0 | 1 | 2 {
  if (api === Api.AddPartitionsToTxn || api === Api.AddOffsetsToTxn) return 1;
  if (api === Api.Produce || api === Api.WriteTxnMarkers || api === Api.TxnOffsetCommit) return 2;
  return 0;
}

export function renamePartitionsField(perm: Renaming, api: number, partitions: number): number {
  const kind = partitionsKind(api);
  return kind === 1 ? renameMask(perm, partitions) : kind === 2 ? renameIndex(perm, partitions) : partitions;
}

/**
 * A renaming of the transactional.ids, as the producer instances, nodes and client transactions
 * see it: transactional.id t becomes perm[t]; with `instances`, its instance k also becomes
 * instance instances[t][k] (null: the id's instances keep their numbers). A class, not closures:
 * a renaming is built for every candidate of every state.
 */
export class IdRenaming {
  private readonly perId: number;
  private readonly perInstance: number;

  constructor(
    cfg: Pick<KafkaConfig, 'instancesPerId' | 'transactionsPerInstance'>,
    private readonly perm: Renaming,
    private readonly instances: readonly (Renaming | null)[] = [],
  ) {
    this.perId = cfg.instancesPerId;
    this.perInstance = cfg.transactionsPerInstance;
  }

  txnId(t: number): number {
    return this.perm[t]!;
  }

  producer(i: number): number {
    if (i < 0) return i;
    const t = Math.floor(i / this.perId);
    const k = i % this.perId;
    return this.perm[t]! * this.perId + this.instance(t, k);
  }

  /** The number instance k of transactional.id t takes. */
  instance(t: number, k: number): number {
    return this.instances[t]?.[k] ?? k;
  }

  clientTxn(c: number): number {
    if (c < 0) return c;
    return this.producer(Math.floor(c / this.perInstance)) * this.perInstance + (c % this.perInstance);
  }

  /** A producer instance's node is its index; every other node keeps its number. */
  node(n: number): number {
    return isProducerNode(n) ? this.producer(n) : n;
  }

  /** Client transaction k of producer i (k may be one past the last: an InitProducerId's first transaction not yet begun). */
  clientTxnOf(i: number, c: number): number {
    return this.producer(i) * this.perInstance + (c - i * this.perInstance);
  }
}
