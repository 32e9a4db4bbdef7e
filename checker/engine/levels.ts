// The two levels of a breadth-first search on one thread: the one being expanded and the next,
// built meanwhile. Past the spill size their words go to temporary files (frontier.ts); the most
// the two took together, in memory and on disk, is kept for the result.
import type { Checkpoint, Pieces } from './checkpoint.ts';
import { ChunkPool, Frontier, Spill } from './frontier.ts';
import type { Model } from './model.ts';

export class Levels<S> {
  private readonly spill: Spill | undefined;
  /** The two levels' chunks: the level just expanded gives its chunks to the one after next. */
  private readonly pool: ChunkPool;
  /** The level being expanded. */
  current: Frontier<S>;
  /** The level its successors make. */
  next: Frontier<S>;
  /** The id of the current level's first state: ids are the order of discovery. */
  startId = 0;
  /** The most the two levels held together in memory, measured at the end of each level. */
  queueBytes = 0;
  /** The same on disk. */
  spilledBytes = 0;

  constructor(
    private readonly model: Model<S, unknown>,
    spillBytes: number | undefined,
  ) {
    this.spill = spillBytes === undefined ? undefined : new Spill(spillBytes);
    this.pool = new ChunkPool(this.spill);
    this.current = new Frontier(model, this.spill, this.pool);
    this.next = new Frontier(model, this.spill, this.pool);
  }

  /** Whether the levels go to disk past a size. */
  get spills(): boolean {
    return this.spill !== undefined;
  }

  /** What the levels may take at once at their next growth. */
  get growthBytes(): number {
    return this.current.growthBytes + this.next.growthBytes;
  }

  /** The current level is expanded: the next one takes its place, and its lists take the level after next. */
  advance(): void {
    this.startId += this.current.length;
    this.queueBytes = Math.max(this.queueBytes, this.current.bytes + this.next.bytes);
    this.spilledBytes = Math.max(this.spilledBytes, this.current.spilledBytes + this.next.spilledBytes);
    [this.current, this.next] = [this.next, this.current];
  }

  /** The two levels as a checkpoint saves them. */
  saved(): Pick<Checkpoint<Pieces | Int32Array>, 'levelWords' | 'levelEnds' | 'nextWords' | 'nextEnds'> {
    const current = this.current.saved();
    const next = this.next.saved();
    return { levelWords: current.words, levelEnds: current.ends, nextWords: next.words, nextEnds: next.ends };
  }

  /** Takes up the levels a checkpoint saved. */
  restore(saved: Checkpoint): void {
    this.current = Frontier.restore(this.model, saved.levelWords, saved.levelEnds, this.spill, this.pool);
    this.next = Frontier.restore(this.model, saved.nextWords, saved.nextEnds, this.spill, this.pool);
    this.startId = saved.counters.levelStartId;
    this.queueBytes = saved.counters.queueBytes;
  }

  /** Removes whatever went to disk. */
  removeSpilled(): void {
    this.spill?.remove();
  }
}
