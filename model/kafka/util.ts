// Small immutable-update helpers shared by the actor files.

export function setAt<T>(items: readonly T[], index: number, value: T): readonly T[] {
  const copy = items.slice();
  copy[index] = value;
  return copy;
}

export function bit(index: number): number {
  return 1 << index;
}

export function has(mask: number, index: number): boolean {
  return (mask & (1 << index)) !== 0;
}

export function bits(mask: number): number[] {
  const out: number[] = [];
  for (let i = 0; mask >>> i !== 0; i++) if (has(mask, i)) out.push(i);
  return out;
}
