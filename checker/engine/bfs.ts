// Breadth-first search. A state's id is its discovery order; per id only the parent id and the
// index of the action that led to it are kept, in typed arrays, and full states only while
// they wait in the frontier. Invariants are checked when a state is first discovered, so the
// first violation found has a shortest trace. The level in which it is found is finished before
// reporting, so the counts are those of whole levels, as the parallel search reports them.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { InputError } from './input.ts';
import { IntList } from './int-list.ts';
import { PACK_WORDS, type Model } from './model.ts';
import { StubbornSets } from './reduction.ts';
import { DEADLOCK, Discovery, SearchRun, brokenInvariant, rebuildTrace, stateFingerprint, successorsOf, type Limit, type Result, type SearchOptions } from './search.ts';
import { VisitedSet } from './visited.ts';

/** Expansions between two looks at the clock. */
const CLOCK_EVERY = 256;

/** Per state id: the parent id (-1 for an initial state) and the action index (for an initial state, its index in init()). */
export class Trail {
  parentOf = new Int32Array(1 << 12);
  viaAction = new Int32Array(1 << 12);

  set(id: number, parent: number, action: number): void {
    if (id >= this.parentOf.length) {
      const size = Math.max(id + 1, this.parentOf.length * 2);
      const biggerParents = new Int32Array(size);
      biggerParents.set(this.parentOf);
      this.parentOf = biggerParents;
      const biggerActions = new Int32Array(size);
      biggerActions.set(this.viaAction);
      this.viaAction = biggerActions;
    }
    this.parentOf[id] = parent;
    this.viaAction[id] = action;
  }

  get bytes(): number {
    return this.parentOf.byteLength + this.viaAction.byteLength;
  }

  /** The first `n` entries, for a checkpoint. */
  saved(n: number): { parents: Int32Array; actions: Int32Array } {
    return { parents: this.parentOf.subarray(0, n), actions: this.viaAction.subarray(0, n) };
  }

  static restore(parents: Int32Array, actions: Int32Array): Trail {
    const trail = new Trail();
    const size = Math.max(1 << 12, parents.length);
    trail.parentOf = new Int32Array(size);
    trail.parentOf.set(parents);
    trail.viaAction = new Int32Array(size);
    trail.viaAction.set(actions);
    return trail;
  }

  /** The initial state index and the action indices that lead to `id`. */
  path(id: number): { init: number; actions: number[] } {
    const actions: number[] = [];
    for (; this.parentOf[id]! !== -1; id = this.parentOf[id]!) actions.push(this.viaAction[id]!);
    return { init: this.viaAction[id]!, actions: actions.reverse() };
  }
}

/**
 * Where the waiting levels go when their packed words pass `bytes` in memory: files in a
 * temporary folder, made at the first spill and removed with everything in it at the end.
 */
interface SpillFile {
  readonly path: string;
  readonly fd: number;
}

export class Spill {
  private folder: string | undefined;
  private files = 0;
  private readonly open = new Set<SpillFile>();

  constructor(readonly bytes: number) {}

  newFile(): SpillFile {
    this.folder ??= mkdtempSync(join(tmpdir(), 'txcheck-frontier-'));
    const path = join(this.folder, `level-${this.files++}.bin`);
    const file = { path, fd: openSync(path, 'w+') };
    this.open.add(file);
    return file;
  }

  close(file: SpillFile): void {
    closeSync(file.fd);
    rmSync(file.path, { force: true });
    this.open.delete(file);
  }

  remove(): void {
    for (const file of this.open) closeSync(file.fd);
    this.open.clear();
    if (this.folder !== undefined) rmSync(this.folder, { recursive: true, force: true });
    this.folder = undefined;
  }
}

/**
 * The states of one level waiting to be expanded. When the model packs and unpacks its states they
 * wait as words in one growing list (a few bytes a field instead of an object each), else as the
 * objects themselves. With a `Spill`, words past its size go to a file, read back in order.
 */
export class Frontier<S> {
  private readonly objects: (S | undefined)[] = [];
  private words = new IntList(1 << 12);
  /** Where each packed state's words end, counted from the level's first word (on disk or not). */
  private readonly ends = new IntList(1 << 10);
  private readonly scratch: Int32Array | undefined;
  /** Words written to the file so far; the ones in memory follow them. */
  private flushed = 0;
  private file: SpillFile | undefined;
  /** Where each piece written to the file ends (in words): states never straddle two pieces. */
  private readonly pieces: number[] = [];
  private read: { start: number; end: number; words: Int32Array; piece: number } = { start: 0, end: 0, words: new Int32Array(0), piece: -1 };

  constructor(
    private readonly model: Model<S, unknown>,
    private readonly spill?: Spill,
  ) {
    this.scratch = model.pack !== undefined && model.unpack !== undefined ? new Int32Array(PACK_WORDS) : undefined;
  }

  get length(): number {
    return this.scratch === undefined ? this.objects.length : this.ends.length;
  }

  /** Bytes the waiting states take in memory (the packed lists; objects are not counted). */
  get bytes(): number {
    return this.scratch === undefined ? 0 : this.words.bytes + this.ends.bytes + this.read.words.byteLength;
  }

  /** Bytes the waiting states take on disk. */
  get spilledBytes(): number {
    return this.flushed * 4;
  }

  /** Adds `s`; `packed` holds its first `length` words when the caller has packed it already. */
  push(s: S, packed?: Int32Array, length = 0): void {
    if (this.scratch === undefined) {
      this.objects.push(s);
      return;
    }
    if (packed === undefined || length === 0) {
      packed = this.scratch;
      length = this.model.pack!(s, packed);
    }
    this.words.pushAll(packed, length);
    this.ends.push(this.flushed + this.words.length);
    if (this.spill !== undefined && this.words.length * 4 >= this.spill.bytes) this.flush();
  }

  /** Moves the words in memory to the end of the file. */
  private flush(): void {
    this.file ??= this.spill!.newFile();
    const words = this.words.subarray(0, this.words.length);
    writeSync(this.file.fd, new Uint8Array(words.buffer, words.byteOffset, words.byteLength), 0, words.byteLength, this.flushed * 4);
    this.flushed += words.length;
    this.pieces.push(this.flushed);
    this.words = new IntList(1 << 12);
  }

  /** Words `from` to `to` of the level, from memory or from the file. */
  private wordsOf(from: number, to: number): Int32Array {
    if (from >= this.flushed) return this.words.subarray(from - this.flushed, to - this.flushed);
    const r = this.read;
    if (from < r.start || to > r.end) {
      // States are taken in order, so the piece holding `from` is this one or a later one.
      let piece = r.piece < 0 || from < r.start ? 0 : r.piece;
      while (this.pieces[piece]! <= from) piece++;
      const start = piece === 0 ? 0 : this.pieces[piece - 1]!;
      const end = this.pieces[piece]!;
      const bytes = new Uint8Array((end - start) * 4);
      readSync(this.file!.fd, bytes, 0, bytes.length, start * 4);
      this.read = { start, end, words: new Int32Array(bytes.buffer), piece };
    }
    return this.read.words.subarray(from - this.read.start, to - this.read.start);
  }

  /** The packed words and where each state's end, for a checkpoint (a model that packs only). */
  saved(): { words: Int32Array; ends: Int32Array } {
    const total = this.flushed + this.words.length;
    const words = new Int32Array(total);
    let at = 0;
    for (let piece = 0; piece < this.pieces.length; piece++) {
      const end = this.pieces[piece]!;
      words.set(this.wordsOf(at, end), at);
      at = end;
    }
    words.set(this.words.subarray(0, this.words.length), this.flushed);
    return { words, ends: this.ends.subarray(0, this.ends.length) };
  }

  /** A frontier holding the states a checkpoint saved. */
  static restore<S>(model: Model<S, unknown>, words: Int32Array, ends: Int32Array, spill?: Spill): Frontier<S> {
    const frontier = new Frontier(model, spill);
    let from = 0;
    for (const end of ends) {
      frontier.push(undefined as S, words.subarray(from, end), end - from);
      from = end;
    }
    return frontier;
  }

  /** The i-th state; an object is let go once taken. */
  take(i: number): S {
    if (this.scratch === undefined) {
      const s = this.objects[i]!;
      this.objects[i] = undefined;
      return s;
    }
    return this.model.unpack!(this.wordsOf(i === 0 ? 0 : this.ends.get(i - 1), this.ends.get(i)));
  }

  /** Lets the file go. */
  dispose(): void {
    if (this.file === undefined) return;
    this.spill!.close(this.file);
    this.file = undefined;
  }
}

export function bfs<S, A>(model: Model<S, A>, options: SearchOptions): Result {
  const spill = options.spillBytes === undefined ? undefined : new Spill(options.spillBytes);
  try {
    return breadthFirst(model, options, spill);
  } finally {
    spill?.remove();
  }
}

function breadthFirst<S, A>(model: Model<S, A>, options: SearchOptions, spill: Spill | undefined): Result {
  const saving = options.checkpoint;
  if ((saving !== undefined || options.resume !== undefined) && (model.pack === undefined || model.unpack === undefined)) {
    throw new Error('checkpoints need a model that packs and unpacks its states');
  }
  const resumed = options.resume === undefined ? undefined : readCheckpoint(options.resume.file);
  if (resumed !== undefined && resumed.identity !== options.resume!.identity) {
    throw new InputError(options.resume!.file, 'identity', 'a checkpoint of this spec with these options', 'one of another search');
  }
  const counters = resumed?.counters;
  const run = new SearchRun(model, resumed === undefined ? options : { ...options, visited: VisitedSet.restore(resumed.visited, resumed.visitedCount) });
  const reducer = options.reduction === true ? new Reducer(model) : undefined;
  const successors = successorsOf(model);
  const maxDepth = options.maxDepth ?? Infinity;
  const trail = resumed === undefined ? new Trail() : Trail.restore(resumed.parents, resumed.actions);
  const secondsBefore = counters?.seconds ?? 0;
  // The first violation in discovery order: the property and the state id.
  let found: { property: string; id: number } | undefined = counters?.found ?? undefined;

  let queueBytes = counters?.queueBytes ?? 0;
  let spilledBytes = 0;
  const finish = (stoppedBy?: Limit): Result => {
    const memory = { visitedBytes: run.visited.bytes, traceBytes: trail.bytes, queueBytes, ...(spill === undefined ? {} : { spilledBytes }) };
    const extra = { memory, ...(reducer === undefined ? {} : { reducedStates: reducer.reducedStates }) };
    let result: Result;
    if (found !== undefined) {
      const { init, actions } = trail.path(found.id);
      result = run.finish('violation', { violation: { property: found.property, trace: rebuildTrace(model, init, actions) }, ...extra });
    } else result = stoppedBy === undefined ? run.finish('ok', extra) : run.finish('incomplete', { stoppedBy, ...extra });
    return secondsBefore === 0 ? result : { ...result, seconds: result.seconds + secondsBefore };
  };

  let level = new Frontier(model, spill);
  let nextLevel = new Frontier(model, spill);
  let levelStartId = 0;
  let firstIndex = 0;
  let overLimit = false;
  let cutOffByDepth = false;
  if (resumed === undefined) {
    const inits = model.init();
    for (let i = 0; i < inits.length; i++) {
      const s = inits[i]!;
      run.statesGenerated++;
      const discovery = run.discover(s);
      if (discovery === Discovery.Seen) continue;
      if (discovery === Discovery.OverLimit) return finish('maxStates');
      const id = run.distinctStates - 1;
      trail.set(id, -1, i);
      const broken = brokenInvariant(model, s);
      if (broken !== undefined) found ??= { property: broken, id };
      level.push(s);
    }
    if (found !== undefined) return finish();
  } else {
    const c = counters!;
    run.statesGenerated = c.statesGenerated;
    run.depth = c.depth;
    run.coverage.add(c.coverage);
    level = Frontier.restore(model, resumed.levelWords, resumed.levelEnds, spill);
    nextLevel = Frontier.restore(model, resumed.nextWords, resumed.nextEnds, spill);
    levelStartId = c.levelStartId;
    firstIndex = c.nextIndex;
    overLimit = c.overLimit;
    cutOffByDepth = c.cutOffByDepth;
    reducer?.restore(resumed.nextLevelSeen, resumed.nextLevelSeenCount, c.reducedStates);
  }

  let parent = 0;
  const visit = (t: S, action: number): void => {
    run.statesGenerated++;
    const discovery = run.discover(t);
    if (discovery === Discovery.Seen) return;
    if (discovery === Discovery.OverLimit) {
      overLimit = true;
      return;
    }
    const tid = run.distinctStates - 1;
    trail.set(tid, parent, action);
    reducer?.seenInNextLevel(run.fingerprint);
    if (found === undefined) {
      const broken = brokenInvariant(model, t);
      if (broken !== undefined) found = { property: broken, id: tid };
    }
    nextLevel.push(t, run.packed.words, run.packed.length);
  };
  let emitted = 0;
  const emit = (t: S, action: number, kind: number): void => {
    emitted++;
    run.coverage.firedKind(kind);
    visit(t, action);
  };
  const countOnly = (): void => void emitted++;

  const expandReduced = (s: S): boolean => {
    const kept = reducer!.keptSuccessors(s, run.visited);
    if (kept === undefined) return false;
    for (const { state, action, kind } of kept) emit(state, action, kind);
    return true;
  };

  const now = options.now ?? (() => performance.now());
  let lastSave = now();
  /** Saves the search as it stands before expanding the level's state `nextIndex`. */
  const save = (nextIndex: number): void => {
    const visited = run.visited.snapshot();
    const { parents, actions } = trail.saved(run.distinctStates);
    const current = level.saved();
    const next = nextLevel.saved();
    const seen = reducer?.snapshot() ?? { table: new Int32Array(0), count: 0 };
    writeCheckpoint(saving!.file, {
      identity: saving!.identity,
      counters: {
        distinctStates: run.distinctStates,
        statesGenerated: run.statesGenerated,
        depth: run.depth,
        levelStartId,
        nextIndex,
        queueBytes,
        seconds: secondsBefore + run.clock.seconds,
        coverage: run.coverage.raw,
        found: found ?? null,
        overLimit,
        cutOffByDepth,
        reducedStates: reducer?.reducedStates ?? 0,
      },
      visited: visited.table,
      visitedCount: visited.count,
      parents,
      actions,
      levelWords: current.words,
      levelEnds: current.ends,
      nextWords: next.words,
      nextEnds: next.ends,
      nextLevelSeen: seen.table,
      nextLevelSeenCount: seen.count,
    });
    lastSave = now();
  };

  let sinceClock = 0;
  while (level.length > 0) {
    if (firstIndex === 0) {
      nextLevel = new Frontier(model, spill);
      reducer?.startLevel();
      cutOffByDepth = false;
    }
    for (let i = firstIndex; i < level.length; i++) {
      const s = level.take(i);
      parent = levelStartId + i;
      emitted = 0;
      const beyondLimit = overLimit;
      if (run.depth >= maxDepth) successors(s, countOnly);
      else if (reducer === undefined || !expandReduced(s)) successors(s, emit);
      // Past the state limit nothing new is kept, but the level is expanded to its end, as on workers.
      if (emitted === 0 && !options.deadlockAllowed && !beyondLimit) found ??= { property: DEADLOCK, id: parent };
      cutOffByDepth ||= run.depth >= maxDepth && emitted > 0;
      if (++sinceClock === CLOCK_EVERY) {
        sinceClock = 0;
        const limit = run.clock.check(() => run.progress(level.length - i - 1 + nextLevel.length));
        // A stop between two states can be taken up again; past the state limit states were dropped.
        const resumable = saving !== undefined && !overLimit;
        if (limit !== undefined) {
          if (resumable) save(i + 1);
          return finish(limit);
        }
        if (resumable && now() - lastSave >= saving.everySeconds * 1000) save(i + 1);
      }
    }
    firstIndex = 0;
    if (found !== undefined || overLimit) {
      if (nextLevel.length > 0) run.depth++;
      return finish(found === undefined ? 'maxStates' : undefined);
    }
    if (cutOffByDepth) return finish('maxDepth');
    levelStartId += level.length;
    queueBytes = Math.max(queueBytes, level.bytes + nextLevel.bytes);
    spilledBytes = Math.max(spilledBytes, level.spilledBytes + nextLevel.spilledBytes);
    level.dispose();
    level = nextLevel;
    if (level.length > 0) run.depth++;
  }
  return finish();
}

/**
 * The stubborn-set half of a reduced breadth-first search: which successors a state keeps, and the
 * proviso, which needs to know whether a successor was first seen in the level being built.
 */
class Reducer<S, A> {
  reducedStates = 0;
  private readonly sets: StubbornSets;
  private readonly fingerprintOf: (s: S, out: Int32Array) => void;
  private readonly probe = new Int32Array(2);
  private readonly kindIndex: ReadonlyMap<string, number>;
  private nextLevel = new VisitedSet();

  constructor(private readonly model: Model<S, A>) {
    if (model.independence === undefined) throw new Error('partial-order reduction needs the model to describe its independence');
    this.sets = new StubbornSets(model.independence as never);
    this.fingerprintOf = stateFingerprint(model);
    this.kindIndex = new Map(model.actionKinds.map((kind, i) => [kind, i]));
  }

  startLevel(): void {
    this.nextLevel = new VisitedSet();
  }

  snapshot(): { table: Int32Array; count: number } {
    return this.nextLevel.snapshot();
  }

  restore(table: Int32Array, count: number, reducedStates: number): void {
    if (table.length > 0) this.nextLevel = VisitedSet.restore(table, count);
    this.reducedStates = reducedStates;
  }

  seenInNextLevel(fingerprint: Int32Array): void {
    this.nextLevel.add(fingerprint[0]!, fingerprint[1]!);
  }

  /**
   * The successors by the actions of a stubborn set of `s`, or undefined when `s` must be
   * expanded in full: the set holds every enabled action, or (C3) one of its successors was seen
   * at the depth of `s` or before.
   */
  keptSuccessors(s: S, visited: VisitedSet): { state: S; action: number; kind: number }[] | undefined {
    const actions = this.model.actions(s);
    const classes = this.model.independence!.classesOf(s);
    const chosen = this.sets.choose(classes);
    if (chosen === null) return undefined;
    const kept: { state: S; action: number; kind: number }[] = [];
    for (let i = 0; i < actions.length; i++) {
      if (chosen[classes[i]!] === 0) continue;
      const t = this.model.next(s, actions[i]!);
      this.fingerprintOf(t, this.probe);
      if (visited.has(this.probe[0]!, this.probe[1]!) && !this.nextLevel.has(this.probe[0]!, this.probe[1]!)) return undefined;
      kept.push({ state: t, action: i, kind: this.kindIndex.get(this.model.kind(actions[i]!))! });
    }
    this.reducedStates++;
    return kept;
  }
}
