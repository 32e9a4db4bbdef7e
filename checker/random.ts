// Random walks. Walk i of seed s draws from a generator seeded by walkSeed(s, i) alone, so any
// walk can be rerun by itself and the same seed always gives the same result.
import seedrandom from 'seedrandom';
import { fingerprintInto } from './fingerprint.ts';
import type { Model } from './model.ts';
import { Clock, CoverageCounter, DEADLOCK, brokenInvariant, rebuildTrace, type Result, type SearchOptions } from './search.ts';
import { VisitedSet } from './visited.ts';

export interface RandomOptions extends SearchOptions {
  readonly seed: number;
  readonly walks: number;
  /** The most actions per walk. */
  readonly maxDepth: number;
  /** The index of the first walk; walks firstWalk .. firstWalk + walks - 1 are run. */
  readonly firstWalk?: number;
}

export function walkSeed(seed: number, walk: number): string {
  return `txcheck/${seed}/${walk}`;
}

export function randomSearch<S, A>(model: Model<S, A>, options: RandomOptions): Result {
  const clock = new Clock(options);
  const coverage = new CoverageCounter(model);
  const visited = new VisitedSet();
  const fingerprint = new Uint32Array(2);
  const maxStates = options.maxStates ?? Infinity;
  const inits = model.init();
  const firstWalk = options.firstWalk ?? 0;
  let generated = 0;
  let depth = 0;

  const finish = (extra: Partial<Result> & Pick<Result, 'status'>): Result => ({
    distinctStates: visited.size,
    statesGenerated: generated,
    depth,
    seconds: clock.seconds,
    coverage: coverage.result(),
    ...extra,
  });

  const progress = () => ({ distinctStates: visited.size, statesGenerated: generated, queue: 0, depth });

  for (let walk = firstWalk; walk < firstWalk + options.walks; walk++) {
    const random = seedrandom(walkSeed(options.seed, walk));
    const initIndex = Math.floor(random() * inits.length);
    const chosen: number[] = [];
    let s: S = inits[initIndex]!;
    generated++;
    for (let step = 0; ; step++) {
      fingerprintInto(model.canonical === undefined ? s : model.canonical(s), fingerprint);
      if (!visited.has(fingerprint[0]!, fingerprint[1]!)) {
        if (visited.size >= maxStates) return finish({ status: 'incomplete', stoppedBy: 'maxStates' });
        visited.add(fingerprint[0]!, fingerprint[1]!);
        const broken = brokenInvariant(model, s);
        if (broken !== undefined) {
          return finish({ status: 'violation', violation: { property: broken, walk, trace: rebuildTrace(model, initIndex, chosen) } });
        }
      }
      const actions = model.actions(s);
      if (actions.length === 0 && !options.deadlockAllowed) {
        return finish({ status: 'violation', violation: { property: DEADLOCK, walk, trace: rebuildTrace(model, initIndex, chosen) } });
      }
      if (actions.length === 0 || step === options.maxDepth) break;
      const index = Math.floor(random() * actions.length);
      const action = actions[index]!;
      s = model.next(s, action);
      generated++;
      coverage.fired(action);
      chosen.push(index);
      if (step + 1 > depth) depth = step + 1;
    }
    if (clock.check(progress)) return finish({ status: 'incomplete', stoppedBy: 'maxSeconds' });
  }
  return finish({ status: 'ok' });
}
