// One worker of the parallel BFS (see protocol.ts): owns the fingerprints whose high word is
// its index modulo the number of workers, and holds and expands the states it made and won.
import { deserialize, serialize } from 'node:v8';
import { workerData } from 'node:worker_threads';
import { PACK_WORDS } from '../model.ts';
import { brokenInvariant, stateFingerprint, successorsOf } from '../search.ts';
import { VisitedSet } from '../visited.ts';
import { FingerprintMap } from '../fingerprint-map.ts';
import { type Reply, answerRequests } from './handle.ts';
import { IntList } from '../int-list.ts';
import { mergeByKey } from './merge.ts';
import { buildModel } from './recipe.ts';
import { type Command, type Decided, type Expanded, type Handed, type Held, RECORD, type Released, type WorkerSetup } from './protocol.ts';

const setup = workerData as WorkerSetup;
const { workers, me, deadlockAllowed } = setup;
const model = await buildModel(setup.recipe);
const fingerprintOf = stateFingerprint(model);
const successors = successorsOf(model);
const fingerprint = new Int32Array(2);
const owner = (high: number) => (high >>> 0) % workers;

const visited = new VisitedSet();
let held: unknown[] = [];

// This level's candidates: the successors this worker made, one per fingerprint, in the order
// made, which is key order.
let candidates: unknown[] = [];
const candidateParentRank = new IntList();
const candidateAction = new IntList();
const outboxes = Array.from({ length: workers }, () => new IntList());
// Per fingerprint met this level: for one this worker owns, its choice; else the candidate.
const levelIndex = new FingerprintMap();

// The owner's choices of this level, one per new fingerprint it owns: the least key met and
// who made that candidate. A new fingerprint enters the visited set when first met, so a
// fingerprint met again at this level is found in levelIndex.
const choiceParentRank = new IntList();
const choiceAction = new IntList();
const choiceHolder = new IntList();
const choiceCandidate = new IntList();

let coverage = model.actionKinds.map(() => 0);

function startLevel(): void {
  candidates = [];
  // Lists are reused from level to level: big typed arrays made anew each time cost collections.
  for (const list of [candidateParentRank, candidateAction, ...outboxes, choiceParentRank, choiceAction, choiceHolder, choiceCandidate]) list.clear();
  levelIndex.clear();
}

function newChoice(high: number, low: number, parentRank: number, action: number, holder: number, candidate: number): void {
  levelIndex.set(high, low, choiceHolder.length);
  choiceParentRank.push(parentRank);
  choiceAction.push(action);
  choiceHolder.push(holder);
  choiceCandidate.push(candidate);
}

function offer(t: unknown, parentRank: number, action: number): void {
  fingerprintOf(t, fingerprint);
  const high = fingerprint[0]!;
  const low = fingerprint[1]!;
  const to = owner(high);
  if (to === me) {
    // Seen before: at an earlier level, or at this one from a lesser key.
    if (!visited.add(high, low)) return;
    newChoice(high, low, parentRank, action, me, candidates.length);
  } else {
    if (levelIndex.get(high, low) !== -1) return;
    levelIndex.set(high, low, candidates.length);
    const out = outboxes[to]!;
    out.push(high);
    out.push(low);
    out.push(parentRank);
    out.push(action);
    out.push(candidates.length);
  }
  candidates.push(t);
  candidateParentRank.push(parentRank);
  candidateAction.push(action);
}

/** Takes a candidate from another worker when its fingerprint is new or its key is less. */
function consider(high: number, low: number, parentRank: number, action: number, holder: number, candidate: number): void {
  const choice = levelIndex.get(high, low);
  if (choice === -1) {
    if (visited.add(high, low)) newChoice(high, low, parentRank, action, holder, candidate);
  } else if (parentRank < choiceParentRank.get(choice) || (parentRank === choiceParentRank.get(choice) && action < choiceAction.get(choice))) {
    choiceParentRank.set(choice, parentRank);
    choiceAction.set(choice, action);
    choiceHolder.set(choice, holder);
    choiceCandidate.set(choice, candidate);
  }
}

function report(deadlock: number, cutOff: boolean, statesGenerated: number): Expanded {
  const result = { outboxes: outboxes.map((o, w) => (w === me ? null : o.take())), deadlock, cutOff, statesGenerated, coverage };
  coverage = model.actionKinds.map(() => 0);
  return result;
}

function seed(): Expanded {
  startLevel();
  // Every worker makes every initial state and keeps those it owns.
  model.init().forEach((s, i) => {
    fingerprintOf(s, fingerprint);
    if (owner(fingerprint[0]!) === me) offer(s, -1, i);
  });
  return report(-1, false, 0);
}

function expand(ranks: Int32Array, cut: boolean): Expanded {
  startLevel();
  let deadlock = -1;
  let cutOff = false;
  let generated = 0;
  let emitted = 0;
  let parentRank = 0;
  const emit = (t: unknown, action: number, kind: number): void => {
    emitted++;
    coverage[kind]!++;
    offer(t, parentRank, action);
  };
  const countOnly = (): void => void emitted++;
  for (let i = 0; i < held.length; i++) {
    parentRank = ranks[i]!;
    emitted = 0;
    successors(held[i], cut ? countOnly : emit);
    if (emitted === 0 && !deadlockAllowed && deadlock === -1) deadlock = parentRank;
    cutOff ||= cut && emitted > 0;
    if (!cut) generated += emitted;
  }
  held = [];
  return report(deadlock, cutOff, generated);
}

function decide(inboxes: readonly (Int32Array | null)[]): Decided {
  inboxes.forEach((records, from) => {
    if (records === null) return;
    for (let at = 0; at < records.length; at += RECORD.size) {
      consider(records[at + RECORD.high]!, records[at + RECORD.low]!, records[at + RECORD.parentRank]!, records[at + RECORD.action]!, from, records[at + RECORD.candidate]!);
    }
  });
  const winners = Array.from({ length: workers }, () => new IntList());
  for (let c = 0; c < choiceHolder.length; c++) winners[choiceHolder.get(c)]!.push(choiceCandidate.get(c));
  ownWinners = winners[me]!.take();
  return { winners: winners.map((w, to) => (to === me ? null : w.take())), counts: winners.map((w) => w.length) };
}

/** The candidates this worker chose as its own owner. */
let ownWinners: Int32Array = new Int32Array(0);
/** The chosen candidates this worker keeps, in key order. */
let kept: Int32Array = new Int32Array(0);

const packed = new Int32Array(PACK_WORDS);

/** States as bytes: packed words, each state's preceded by its length, when the model packs and unpacks. */
function encode(states: readonly unknown[]): Uint8Array {
  if (model.pack === undefined || model.unpack === undefined) return new Uint8Array(serialize(states));
  const words = new IntList(states.length * 8);
  for (const s of states) {
    const length = model.pack(s, packed);
    words.push(length);
    words.pushAll(packed, length);
  }
  const taken = words.take();
  return new Uint8Array(taken.buffer, taken.byteOffset, taken.byteLength);
}

function decode(bytes: Uint8Array): unknown[] {
  if (model.pack === undefined || model.unpack === undefined) return deserialize(bytes) as unknown[];
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const states: unknown[] = [];
  for (let at = 0; at < words.length; at += 1 + words[at]!) states.push(model.unpack(words.subarray(at + 1, at + 1 + words[at]!)));
  return states;
}

/** Keeps this worker's chosen candidates, but for the last ones, handed to the workers `give` names. */
function release(winnerLists: readonly (Int32Array | null)[], give: readonly number[]): Released {
  const lists = winnerLists.map((w) => w ?? ownWinners);
  const mine = new Int32Array(lists.reduce((n, w) => n + w.length, 0));
  let at = 0;
  for (const w of lists) {
    mine.set(w, at);
    at += w.length;
  }
  // Candidates were made in key order, so their indices sort in key order.
  mine.sort();
  let end = mine.length;
  const given = give.map((count) => {
    if (count === 0) return null;
    const handed = mine.subarray(end - count, end);
    end -= count;
    return {
      states: encode(Array.from(handed, (c) => candidates[c])),
      parentRanks: Int32Array.from(handed, (c) => candidateParentRank.get(c)),
      actions: Int32Array.from(handed, (c) => candidateAction.get(c)),
    };
  });
  kept = mine.subarray(0, end);
  return { given };
}

/** Takes the kept and the handed states in key order and checks their invariants. */
function hold(given: readonly (Handed | null)[]): Held {
  const handed = given.filter((h) => h !== null);
  const count = kept.length + handed.reduce((n, h) => n + h.parentRanks.length, 0);
  const states = new Array<unknown>(count);
  const keyRanks = new Int32Array(count);
  const keyActions = new Int32Array(count);
  for (let i = 0; i < kept.length; i++) {
    const c = kept[i]!;
    states[i] = candidates[c];
    keyRanks[i] = candidateParentRank.get(c);
    keyActions[i] = candidateAction.get(c);
  }
  let at = kept.length;
  for (const h of handed) {
    for (const t of decode(h.states)) states[at++] = t;
    keyRanks.set(h.parentRanks, at - h.parentRanks.length);
    keyActions.set(h.actions, at - h.actions.length);
  }
  candidates = [];
  let parentRanks = keyRanks;
  let actions = keyActions;
  held = states;
  if (handed.length > 0) {
    // Each part is in key order already: merge them.
    const starts = [0];
    const parts = [kept.length, ...handed.map((h) => h.parentRanks.length)].map((length) => {
      const start = starts.at(-1)!;
      starts.push(start + length);
      return { parentRanks: keyRanks.subarray(start, start + length), actions: keyActions.subarray(start, start + length) };
    });
    held = [];
    parentRanks = new Int32Array(count);
    actions = new Int32Array(count);
    mergeByKey(parts, (p, i) => {
      parentRanks[held.length] = parts[p]!.parentRanks[i]!;
      actions[held.length] = parts[p]!.actions[i]!;
      held.push(states[starts[p]! + i]);
    });
  }
  let violation: Held['violation'] = null;
  for (let i = 0; i < count && violation === null; i++) {
    const broken = brokenInvariant(model, held[i]);
    if (broken !== undefined) violation = { index: i, property: broken };
  }
  return { parentRanks, actions, violation, visitedBytes: visited.bytes };
}

answerRequests((command: Command): Reply => {
  switch (command.type) {
    case 'seed':
      return { message: seed() };
    case 'expand': {
      const expanded = expand(command.ranks, command.cut);
      return { message: expanded, transfer: expanded.outboxes };
    }
    case 'decide': {
      const decided = decide(command.inboxes);
      return { message: decided, transfer: decided.winners };
    }
    case 'release': {
      const released = release(command.winners, command.give);
      return { message: released, transfer: released.given.flatMap((h) => (h === null ? [] : [h.states, h.parentRanks, h.actions])) };
    }
    case 'hold': {
      const keys = hold(command.given);
      return { message: keys, transfer: [keys.parentRanks, keys.actions] };
    }
  }
});
