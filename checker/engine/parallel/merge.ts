// Merging lists of states that are each in key order (parent rank, then action index).

export interface Keys {
  readonly parentRanks: Int32Array;
  readonly actions: Int32Array;
}

/** Calls `visit(part, index)` for every item of the key-sorted `parts`, in key order. */
export function mergeByKey(parts: readonly Keys[], visit: (part: number, index: number) => void): void {
  const next = parts.map(() => 0);
  for (;;) {
    let best = -1;
    for (let p = 0; p < parts.length; p++) {
      const i = next[p]!;
      const a = parts[p]!;
      if (i === a.parentRanks.length) continue;
      if (best === -1) {
        best = p;
        continue;
      }
      const b = parts[best]!;
      const j = next[best]!;
      if (
        a.parentRanks[i]! < b.parentRanks[j]! ||
        (a.parentRanks[i] === b.parentRanks[j] && a.actions[i]! < b.actions[j]!)
      )
        best = p;
    }
    if (best === -1) return;
    visit(best, next[best]!++);
  }
}
