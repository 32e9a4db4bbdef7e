// Checkpoints of a breadth-first search on one thread: the one a search resumes from, read and
// checked, and the saves on the search's schedule (checkpoint.ts is the file format).
import { type Checkpoint, type Pieces, readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import type { Model } from './model.ts';
import type { SearchOptions } from './search.ts';

/** A search as it stands, as a checkpoint holds it, save what names the search. */
export type SavedSearch = Omit<Checkpoint<Int32Array | Pieces>, 'identity'>;

/** The checkpoint `options` resume from, if any, once it is known to be one of this search. */
export function checkpointToResume(
  model: Model<unknown, unknown>,
  options: SearchOptions,
): Checkpoint | undefined {
  if (
    (options.checkpoint !== undefined || options.resume !== undefined) &&
    (model.pack === undefined || model.unpack === undefined)
  ) {
    throw new Error('checkpoints need a model that packs and unpacks its states');
  }
  if (options.resume === undefined) return undefined;
  // The reader refuses a checkpoint of another search, naming what differs.
  return readCheckpoint(options.resume.file, options.resume.identity);
}

/** Writes the search to its checkpoint file, and says when the next save is due. */
export class CheckpointSaver {
  private lastSave: number;

  constructor(
    private readonly saving: NonNullable<SearchOptions['checkpoint']>,
    private readonly now: () => number,
  ) {
    this.lastSave = now();
  }

  /** True once `everySeconds` have passed since the last save (or the start). */
  get due(): boolean {
    return this.now() - this.lastSave >= this.saving.everySeconds * 1000;
  }

  save(search: SavedSearch): void {
    writeCheckpoint(this.saving.file, { identity: this.saving.identity, ...search });
    this.lastSave = this.now();
  }
}
