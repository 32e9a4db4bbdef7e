// One worker of the parallel BFS (see protocol.ts): owns the fingerprints whose high word is
// its index modulo the number of workers, and holds and expands the states it made and won.
import { deserialize, serialize } from 'node:v8';
import { workerData } from 'node:worker_threads';
import { ChunkPool, Frontier, Spill } from '../frontier.ts';
import { PACK_WORDS } from '../model.ts';
import { type PackedWords, brokenInvariantIndex, stateFingerprint, successorsOf } from '../search.ts';
import { VisitedSet } from '../visited.ts';
import { FingerprintMap } from '../fingerprint-map.ts';
import { type Reply, answerRequests } from './handle.ts';
import { IntList, eachPacked } from '../int-list.ts';
import { mergeByKey } from './merge.ts';
import { SetList, SleepExpander } from '../sleep.ts';
import { buildModel } from './recipe.ts';
import {
  type Command,
  type Decided,
  type Expanded,
  type Handed,
  type Held,
  RECORD,
  type Released,
  type WorkerSetup,
} from './protocol.ts';

const setup = workerData as WorkerSetup;
const { workers, me, deadlockAllowed } = setup;
const model = await buildModel(setup.recipe);
// The words a state was packed into to fingerprint it are those it waits as: states wait packed
// (when the model packs), not as objects that would live through a level and churn the heap.
const packed: PackedWords = { words: new Int32Array(PACK_WORDS), length: 0 };
const fingerprintOf = stateFingerprint(model, packed);
const successors = successorsOf(model);
const fingerprint = new Int32Array(2);
const owner = (high: number) => (high >>> 0) % workers;
// Sleep sets (sleep.ts): each candidate's set, intersected with every other arrival in the level,
// here and then at its owner, which hands the final set to the candidate's holder.
const sleep = setup.sleep === true ? new SleepExpander(model) : undefined;
const candidateSets = new SetList();
/** The owner's choices' sets, in choice order. */
const choiceSets = new SetList();
/** The held states' sets, in key order. */
let heldSets = new SetList();

const visited = new VisitedSet();
// As the one-thread search's levels, a level's states wait on disk past a size: a level's
// candidates and held states, at hundreds of bytes each, are what outgrows memory first.
const spill = setup.spill === undefined ? undefined : new Spill(setup.spill.bytes, setup.spill.folder);
// This level's candidates: the successors this worker made, one per fingerprint, in the order
// made, which is key order. The chosen ones stay where they are until the next level has
// expanded them, so each level's candidates go to the other of two lists.
// The two lists and the states handed over share their chunks (frontier.ts).
const pool = new ChunkPool(spill);
let candidates = new Frontier<unknown>(model, spill, pool);
let lastCandidates = new Frontier<unknown>(model, spill, pool);
/**
 * The states this worker expands next, in key order: the `heldIndex`-th state of
 * `heldParts[heldPart]`, where part 0 is the last level's candidates and the others the states
 * handed to this worker. Not copied: a level's states are hundreds of bytes each.
 */
let heldParts: Frontier<unknown>[] = [];
const heldPart = new IntList();
const heldIndex = new IntList();
/** The most bytes of states this worker had on disk at once. */
let spilledPeak = 0;
const candidateParentRank = new IntList();
const candidateAction = new IntList();
// The invariant each candidate breaks first (its index in model.invariants), or -1: checked on the
// successor as made, so a held state is not unpacked again to check it.
const candidateBroken = new IntList();
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
  [candidates, lastCandidates] = [lastCandidates, candidates];
  candidates.clear();
  candidateSets.clear();
  choiceSets.clear();
  // Lists are reused from level to level: big typed arrays made anew each time cost collections.
  for (const list of [
    candidateParentRank,
    candidateAction,
    candidateBroken,
    ...outboxes,
    choiceParentRank,
    choiceAction,
    choiceHolder,
    choiceCandidate,
  ])
    list.clear();
  levelIndex.clear();
}

function newChoice(
  high: number,
  low: number,
  parentRank: number,
  action: number,
  holder: number,
  candidate: number,
): void {
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
    if (!visited.add(high, low)) {
      // Met at this level: while expanding, each choice is one of this worker's candidates.
      const choice = sleep === undefined ? -1 : levelIndex.get(high, low);
      if (choice !== -1) sleep!.intersectPending(candidateSets, choiceCandidate.get(choice));
      return;
    }
    newChoice(high, low, parentRank, action, me, candidates.length);
  } else {
    const candidate = levelIndex.get(high, low);
    if (candidate !== -1) {
      sleep?.intersectPending(candidateSets, candidate);
      return;
    }
    levelIndex.set(high, low, candidates.length);
    const out = outboxes[to]!;
    out.push(high);
    out.push(low);
    out.push(parentRank);
    out.push(action);
    out.push(candidates.length);
  }
  candidates.push(t, packed.words, packed.length);
  sleep?.pushPending(candidateSets);
  candidateParentRank.push(parentRank);
  candidateAction.push(action);
  candidateBroken.push(brokenInvariantIndex(model, t));
}

/** Takes a candidate from another worker when its fingerprint is new or its key is less. */
function consider(
  high: number,
  low: number,
  parentRank: number,
  action: number,
  holder: number,
  candidate: number,
  sets: SetList | null,
  set: number,
): void {
  const choice = levelIndex.get(high, low);
  if (choice === -1) {
    if (visited.add(high, low)) {
      newChoice(high, low, parentRank, action, holder, candidate);
      if (sets !== null) choiceSets.pushSet(sets, set);
    }
    return;
  }
  if (sets !== null) choiceSets.intersectSet(choice, sets, set);
  if (
    parentRank < choiceParentRank.get(choice) ||
    (parentRank === choiceParentRank.get(choice) && action < choiceAction.get(choice))
  ) {
    choiceParentRank.set(choice, parentRank);
    choiceAction.set(choice, action);
    choiceHolder.set(choice, holder);
    choiceCandidate.set(choice, candidate);
  }
}

function report(deadlock: number, cutOff: boolean, statesGenerated: number): Expanded {
  const records = outboxes.map((o, w) => (w === me ? null : o.take()));
  const result = {
    outboxes: records,
    // The sets as they stand now the level is expanded, a record's after its candidate's.
    ...(sleep === undefined
      ? {}
      : {
          outboxSets: records.map((r) =>
            r === null
              ? null
              : candidateSets.flatten(
                  Int32Array.from(
                    { length: r.length / RECORD.size },
                    (_, x) => r[x * RECORD.size + RECORD.candidate]!,
                  ),
                ),
          ),
        }),
    deadlock,
    cutOff,
    statesGenerated,
    coverage,
  };
  coverage = model.actionKinds.map(() => 0);
  return result;
}

function seed(): Expanded {
  startLevel();
  // Every worker makes every initial state and keeps those it owns.
  sleep?.startEmpty();
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
  for (let i = 0; i < heldIndex.length; i++) {
    parentRank = ranks[i]!;
    emitted = 0;
    const s = heldParts[heldPart.get(i)]!.take(heldIndex.get(i));
    // Slept actions count as enabled: a state whose every action sleeps is no deadlock.
    let slept = 0;
    if (sleep === undefined || cut) successors(s, cut ? countOnly : emit);
    else slept = sleep.expand(s, heldSets, i, emit);
    if (emitted + slept === 0 && !deadlockAllowed && deadlock === -1) deadlock = parentRank;
    cutOff ||= cut && emitted > 0;
    if (!cut) generated += emitted;
  }
  for (let p = 1; p < heldParts.length; p++) heldParts[p]!.clear();
  heldParts = [];
  spilledPeak = Math.max(spilledPeak, candidates.spilledBytes + lastCandidates.spilledBytes);
  lastCandidates.clear();
  return report(deadlock, cutOff, generated);
}

function decide(
  inboxes: readonly (Int32Array | null)[],
  inboxSets: readonly (Float64Array | null)[] | undefined,
): Decided {
  // This worker's own choices so far are its candidates: their sets first, in choice order.
  if (sleep !== undefined)
    for (let c = 0; c < choiceCandidate.length; c++)
      choiceSets.pushSet(candidateSets, choiceCandidate.get(c));
  inboxes.forEach((records, from) => {
    if (records === null) return;
    const sets = inboxSets?.[from] == null ? null : SetList.unflatten(inboxSets[from]);
    for (let at = 0; at < records.length; at += RECORD.size) {
      consider(
        records[at + RECORD.high]!,
        records[at + RECORD.low]!,
        records[at + RECORD.parentRank]!,
        records[at + RECORD.action]!,
        from,
        records[at + RECORD.candidate]!,
        sets,
        at / RECORD.size,
      );
    }
  });
  const winners = Array.from({ length: workers }, () => new IntList());
  const winnerChoices = Array.from({ length: workers }, () => new IntList());
  for (let c = 0; c < choiceHolder.length; c++) {
    winners[choiceHolder.get(c)]!.push(choiceCandidate.get(c));
    winnerChoices[choiceHolder.get(c)]!.push(c);
  }
  ownWinners = winners[me]!.take();
  if (sleep !== undefined) ownWinnerSets = choiceSets.flatten(winnerChoices[me]!.take());
  return {
    winners: winners.map((w, to) => (to === me ? null : w.take())),
    counts: winners.map((w) => w.length),
    ...(sleep === undefined
      ? {}
      : { winnerSets: winnerChoices.map((w, to) => (to === me ? null : choiceSets.flatten(w.take()))) }),
  };
}

/** The candidates this worker chose as its own owner, and their final sleep sets. */
let ownWinners: Int32Array = new Int32Array(0);
let ownWinnerSets: Float64Array = new Float64Array(0);
/** Per chosen candidate this worker holds, its final sleep set: set `winnerSetIndex[c]` of `winnerSets[winnerSetList[c]]`. */
let winnerSets: SetList[] = [];
let winnerSetList = new Int32Array(0);
let winnerSetIndex = new Int32Array(0);
/** The chosen candidates this worker keeps, in key order. */
let kept: Int32Array = new Int32Array(0);

/** Some states of `from` as bytes: each state's packed words preceded by their length, when the frontier packs. */
function encode(from: Frontier<unknown>, indices: Int32Array): Uint8Array {
  if (!from.packs) return new Uint8Array(serialize(Array.from(indices, (c) => from.take(c))));
  const words = new IntList(indices.length * 8);
  for (const c of indices) {
    const state = from.wordsAt(c);
    words.pushPacked(state, state.length);
  }
  const taken = words.take();
  return new Uint8Array(taken.buffer, taken.byteOffset, taken.byteLength);
}

function decode(bytes: Uint8Array): Frontier<unknown> {
  const states = new Frontier<unknown>(model, undefined, pool);
  if (!states.packs) {
    for (const s of deserialize(bytes) as unknown[]) states.push(s);
    return states;
  }
  eachPacked(new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), (words) =>
    states.pushWords(words, words.length),
  );
  return states;
}

/** Keeps this worker's chosen candidates, but for the last ones, handed to the workers `give` names. */
function release(
  winnerLists: readonly (Int32Array | null)[],
  winnerSetLists: readonly (Float64Array | null)[] | undefined,
  give: readonly number[],
): Released {
  const lists = winnerLists.map((w) => w ?? ownWinners);
  if (sleep !== undefined) {
    // Where each chosen candidate's final set is, by candidate index.
    winnerSets = winnerSetLists!.map((f) => SetList.unflatten(f ?? ownWinnerSets));
    winnerSetList = new Int32Array(candidates.length);
    winnerSetIndex = new Int32Array(candidates.length);
    lists.forEach((w, from) =>
      w.forEach((c, x) => {
        winnerSetList[c] = from;
        winnerSetIndex[c] = x;
      }),
    );
  }
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
      states: encode(candidates, handed),
      parentRanks: Int32Array.from(handed, (c) => candidateParentRank.get(c)),
      actions: Int32Array.from(handed, (c) => candidateAction.get(c)),
      broken: Int32Array.from(handed, (c) => candidateBroken.get(c)),
      ...(sleep === undefined ? {} : { sets: finalSets(handed).flatten() }),
    };
  });
  kept = mine.subarray(0, end);
  return { given };
}

/** The final sleep sets of some chosen candidates this worker holds, in the order given. */
function finalSets(chosen: ArrayLike<number>): SetList {
  const sets = new SetList();
  for (let x = 0; x < chosen.length; x++) {
    const c = chosen[x]!;
    sets.pushSet(winnerSets[winnerSetList[c]!]!, winnerSetIndex[c]!);
  }
  return sets;
}

/** Takes the kept and the handed states in key order and checks their invariants. */
function hold(given: readonly (Handed | null)[]): Held {
  const handed = given
    .filter((h) => h !== null)
    .map((h) => ({
      states: decode(h.states),
      parentRanks: h.parentRanks,
      actions: h.actions,
      broken: h.broken,
    }));
  const keptKeys = {
    parentRanks: new Int32Array(kept.length),
    actions: new Int32Array(kept.length),
    broken: new Int32Array(kept.length),
  };
  for (let i = 0; i < kept.length; i++) {
    const c = kept[i]!;
    keptKeys.parentRanks[i] = candidateParentRank.get(c);
    keptKeys.actions[i] = candidateAction.get(c);
    keptKeys.broken[i] = candidateBroken.get(c);
  }
  heldParts = [candidates, ...handed.map((h) => h.states)];
  heldPart.clear();
  heldIndex.clear();
  let parentRanks = keptKeys.parentRanks;
  let actions = keptKeys.actions;
  let broken = keptKeys.broken;
  if (handed.length === 0) {
    for (let i = 0; i < kept.length; i++) {
      heldPart.push(0);
      heldIndex.push(kept[i]!);
    }
  } else {
    // Each part is in key order already: merge them.
    const count = kept.length + handed.reduce((n, h) => n + h.parentRanks.length, 0);
    const parts = [keptKeys, ...handed];
    parentRanks = new Int32Array(count);
    actions = new Int32Array(count);
    broken = new Int32Array(count);
    let at = 0;
    mergeByKey(parts, (p, i) => {
      parentRanks[at] = parts[p]!.parentRanks[i]!;
      actions[at] = parts[p]!.actions[i]!;
      broken[at++] = parts[p]!.broken[i]!;
      heldPart.push(p);
      heldIndex.push(p === 0 ? kept[i]! : i);
    });
  }
  if (sleep !== undefined) {
    const handedSets = given.flatMap((h) => (h === null ? [] : [SetList.unflatten(h.sets!)]));
    heldSets = new SetList();
    for (let x = 0; x < heldIndex.length; x++) {
      const p = heldPart.get(x);
      const i = heldIndex.get(x);
      if (p === 0) heldSets.pushSet(winnerSets[winnerSetList[i]!]!, winnerSetIndex[i]!);
      else heldSets.pushSet(handedSets[p - 1]!, i);
    }
  }
  const first = broken.findIndex((b) => b !== -1);
  const violation: Held['violation'] =
    first === -1 ? null : { index: first, property: model.invariants[broken[first]!]!.name };
  return {
    parentRanks,
    actions,
    violation,
    visitedBytes: visited.bytes,
    spilledBytes: (spilledPeak = Math.max(spilledPeak, candidates.spilledBytes)),
  };
}

answerRequests((command: Command): Reply => {
  switch (command.type) {
    case 'seed':
      return { message: seed() };
    case 'expand': {
      const expanded = expand(command.ranks, command.cut);
      return { message: expanded, transfer: [...expanded.outboxes, ...(expanded.outboxSets ?? [])] };
    }
    case 'decide': {
      const decided = decide(command.inboxes, command.inboxSets);
      return { message: decided, transfer: [...decided.winners, ...(decided.winnerSets ?? [])] };
    }
    case 'release': {
      const released = release(command.winners, command.winnerSets, command.give);
      return {
        message: released,
        transfer: released.given.flatMap((h) =>
          h === null
            ? []
            : [h.states, h.parentRanks, h.actions, h.broken, ...(h.sets === undefined ? [] : [h.sets])],
        ),
      };
    }
    case 'hold': {
      const keys = hold(command.given);
      return { message: keys, transfer: [keys.parentRanks, keys.actions] };
    }
  }
});
