// A renaming of the data partitions, as each field that names a partition sees it: shared by the
// renaming of states (symmetry.ts) and the packing of a state under a renaming (pack.ts), which
// must agree word for word.
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
