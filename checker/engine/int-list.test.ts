import { describe, expect, it } from 'vitest';
import { eachPacked, IntList } from './int-list.ts';

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

  it('appends exactly to its room without growing', () => {
    const list = new IntList(4);
    list.pushAll(Int32Array.of(1, 2, 3, 4), 4);
    expect(list.bytes).toBe(16);
    expect(list.take()).toEqual(Int32Array.of(1, 2, 3, 4));
  });

  it('sets an item in place, or appends at its length', () => {
    const list = new IntList(4);
    list.push(1);
    list.set(0, 5);
    list.set(1, 6);
    expect(list.take()).toEqual(Int32Array.of(5, 6));
  });

  it('packs states behind their lengths and gives each back in order', () => {
    const list = new IntList(2);
    list.pushPacked(Int32Array.of(7, 8, 9), 2);
    list.pushPacked(Int32Array.of(), 0);
    list.pushPacked(Int32Array.of(3, 4, 5), 3);
    const seen: number[][] = [];
    eachPacked(list.take(), (words) => seen.push([...words]));
    expect(seen).toEqual([[7, 8], [], [3, 4, 5]]);
  });
});
