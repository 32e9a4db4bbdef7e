// Random walks. Walk i of seed s draws from a generator seeded by walkSeed(s, i) alone, so any
// walk can be rerun by itself and the same seed always gives the same result. Walks never
// cover every state, so a run without a violation ends incomplete, stopped by its walk count.
import seedrandom from 'seedrandom';
import type { Model } from './model.ts';
import {
  DEADLOCK,
  Discovery,
  SearchRun,
  brokenInvariant,
  rebuildTrace,
  type Result,
  type SearchOptions,
} from './search.ts';

export interface RandomOptions extends SearchOptions {
  readonly seed: number;
  /** How many walks to run. */
  readonly walks: number;
  /** The most actions per walk. */
  readonly maxDepth: number;
  /** The index of the first walk. */
  readonly firstWalk?: number;
  /** The distance between the indices of two walks run one after the other (default 1). */
  readonly stride?: number;
  /** The least walk index not worth running any more (another thread found a violation before it). */
  readonly stopAt?: () => number;
}

function walkSeed(seed: number, walk: number): string {
  return `txcheck/${seed}/${walk}`;
}

/** The generator of walk `walk` of seed `seed`, for tools that walk a model their own way. */
export function walkRandom(seed: number, walk: number): () => number {
  return seedrandom(walkSeed(seed, walk));
}

export function randomSearch<S, A>(model: Model<S, A>, options: RandomOptions): Result {
  const run = new SearchRun(model, options);
  const inits = model.init();
  const firstWalk = options.firstWalk ?? 0;
  const stride = options.stride ?? 1;

  for (let k = 0; k < options.walks; k++) {
    const walk = firstWalk + k * stride;
    if (options.stopAt !== undefined && walk >= options.stopAt()) break;
    const random = walkRandom(options.seed, walk);
    const initIndex = Math.floor(random() * inits.length);
    const chosen: number[] = [];
    const violation = (property: string) =>
      run.finish('violation', {
        violation: { property, walk, trace: rebuildTrace(model, initIndex, chosen) },
      });
    let s: S = inits[initIndex]!;
    run.statesGenerated++;
    for (let step = 0; ; step++) {
      // A state seen before was checked then; only new states need their invariants checked.
      const discovery = run.discover(s);
      if (discovery === Discovery.OverLimit) return run.finish('incomplete', { stoppedBy: 'maxStates' });
      if (discovery === Discovery.New) {
        const broken = brokenInvariant(model, s);
        if (broken !== undefined) return violation(broken);
      }
      const actions = model.actions(s);
      if (actions.length === 0 && !options.deadlockAllowed) return violation(DEADLOCK);
      if (actions.length === 0 || step === options.maxDepth) break;
      const index = Math.floor(random() * actions.length);
      const action = actions[index]!;
      s = model.next(s, action);
      run.statesGenerated++;
      run.coverage.fired(action);
      chosen.push(index);
      if (step + 1 > run.depth) run.depth = step + 1;
    }
    const limit = run.clock.check(() => run.progress(0));
    if (limit !== undefined) return run.finish('incomplete', { stoppedBy: limit });
  }
  return run.finish('incomplete', { stoppedBy: 'walks' });
}
