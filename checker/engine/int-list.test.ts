import { describe, expect, it } from 'vitest';
import { IntList } from './int-list.ts';

describe('IntList', () => {
  it('grows by doubling and says what its next growth takes', () => {
    const list = new IntList(4);
    expect(list.growthBytes).toBe(8 * 4);
    for (let i = 0; i < 5; i++) list.push(i);
    expect(list.bytes).toBe(8 * 4);
    expect(list.growthBytes).toBe(16 * 4);
    expect(list.subarray(0, 5)).toEqual(Int32Array.of(0, 1, 2, 3, 4));
  });

  it('stops doubling at its most, and then grows only by what a push needs', () => {
    const list = new IntList(4, 10);
    for (let i = 0; i < 9; i++) list.push(i);
    expect(list.bytes).toBe(10 * 4);
    expect(list.growthBytes).toBe(0);
    list.pushAll(Int32Array.of(9, 10, 11), 3);
    expect(list.bytes).toBe(12 * 4);
    expect(list.subarray(0, 12)).toEqual(Int32Array.from({ length: 12 }, (_, i) => i));
  });

  it('starts no bigger than its most', () => {
    expect(new IntList(1024, 16).bytes).toBe(16 * 4);
  });
});
