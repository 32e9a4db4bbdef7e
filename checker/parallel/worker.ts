// One worker of the parallel BFS (see protocol.ts): owns the fingerprints whose high word is
// its index modulo the number of workers, and holds and expands the states it owns.
import { deserialize, serialize } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PACK_WORDS } from '../model.ts';
import { brokenInvariant, stateFingerprint, successorsOf } from '../search.ts';
import { VisitedSet } from '../visited.ts';
import { FingerprintIndex } from './fingerprint-index.ts';
import { IntList } from './int-list.ts';
import { buildModel } from './recipe.ts';
import { type Held, type Command, type Decided, type Expanded, RECORD, type Released, type WorkerSetup } from './protocol.ts';

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
let outboxes: IntList[] = [];
// Per fingerprint met this level: for one this worker owns, its choice; else the candidate.
const levelIndex = new FingerprintIndex();

// The owner's choices of this level, one per new fingerprint it owns: the least key met and
// who made that candidate. A new fingerprint enters the visited set when first met, so a
// fingerprint met again at this level is found in levelIndex.
let choiceParentRank = new IntList();
let choiceAction = new IntList();
let choiceHolder = new IntList();
let choiceCandidate = new IntList();

let coverage = model.actionKinds.map(() => 0);

function startLevel(): void {
  candidates = [];
  outboxes = Array.from({ length: workers }, () => new IntList());
  levelIndex.clear();
  choiceParentRank = new IntList();
  choiceAction = new IntList();
  choiceHolder = new IntList();
  choiceCandidate = new IntList();
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
  choicesHeldBy = Array.from({ length: workers }, () => new IntList());
  for (let c = 0; c < choiceHolder.length; c++) {
    winners[choiceHolder.get(c)]!.push(choiceCandidate.get(c));
    choicesHeldBy[choiceHolder.get(c)]!.push(c);
  }
  ownWinners = winners[me]!.take();
  return { winners: winners.map((w, to) => (to === me ? null : w.take())) };
}

/** Per holder, the choices whose candidate it holds, in the order of the winner list sent to it. */
let choicesHeldBy: IntList[] = [];
/** The candidates this worker won as its own owner. */
let ownWinners: Int32Array = new Int32Array(0);
let ownReleased: unknown[] = [];

const packed = new Int32Array(PACK_WORDS);

/** States as bytes: packed words, each state's preceded by its length, when the model packs and unpacks. */
function encode(states: readonly unknown[]): Uint8Array {
  if (model.pack === undefined || model.unpack === undefined) return new Uint8Array(serialize(states));
  const words = new IntList(states.length * 8);
  for (const s of states) {
    const length = model.pack(s, packed);
    words.push(length);
    for (let i = 0; i < length; i++) words.push(packed[i]!);
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

/** Hands the winning candidates to their owners. */
function release(winnerLists: readonly (Int32Array | null)[]): Released {
  const states = winnerLists.map((w) => Array.from(w ?? ownWinners, (c) => candidates[c]));
  candidates = [];
  ownReleased = states[me]!;
  // Encoded here, the states pass through the coordinator as bytes it need not decode.
  return { states: states.map((s, to) => (to === me ? null : encode(s))) };
}

/** Takes the states of this level's choices, in key order, and checks their invariants. */
function hold(statesFrom: readonly (Uint8Array | null)[]): Held {
  const count = choiceParentRank.length;
  const stateOf = new Array<unknown>(count);
  statesFrom.forEach((states, from) => {
    const choices = choicesHeldBy[from]!;
    const list = states === null ? ownReleased : decode(states);
    list.forEach((s, k) => (stateOf[choices.get(k)] = s));
  });
  ownReleased = [];
  const order = Array.from({ length: count }, (_, c) => c);
  order.sort((x, y) => choiceParentRank.get(x) - choiceParentRank.get(y) || choiceAction.get(x) - choiceAction.get(y));
  const parentRanks = new Int32Array(count);
  const actions = new Int32Array(count);
  let violation: Held['violation'] = null;
  held = new Array(count);
  for (let i = 0; i < count; i++) {
    const c = order[i]!;
    const s = stateOf[c];
    held[i] = s;
    parentRanks[i] = choiceParentRank.get(c);
    actions[i] = choiceAction.get(c);
    if (violation === null) {
      const broken = brokenInvariant(model, s);
      if (broken !== undefined) violation = { index: i, property: broken };
    }
  }
  return { parentRanks, actions, violation, visitedBytes: visited.bytes };
}

parentPort!.on('message', (command: Command) => {
  switch (command.type) {
    case 'seed':
      return post(seed(), []);
    case 'expand': {
      const expanded = expand(command.ranks, command.cut);
      return post(expanded, expanded.outboxes);
    }
    case 'decide': {
      const decided = decide(command.inboxes);
      return post(decided, decided.winners);
    }
    case 'release': {
      const released = release(command.winners);
      return post(released, released.states);
    }
    case 'hold': {
      const keys = hold(command.states);
      return post(keys, [keys.parentRanks, keys.actions]);
    }
  }
});

/** Posts `message`, handing over the buffers of `arrays` rather than copying them. */
function post(message: Expanded | Decided | Released | Held, arrays: readonly (Int32Array | Uint8Array | null)[]): void {
  parentPort!.postMessage(message, arrays.flatMap((a) => (a === null ? [] : [a.buffer as ArrayBuffer])));
}
