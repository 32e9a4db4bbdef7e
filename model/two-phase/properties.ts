// The invariants of TwoPhase.tla (TPTypeOK) and of the TCommit spec it implements (TCConsistent).
import type { Property } from '../../checker/engine/model.ts';
import { Msg, RmState, TmState, rmStateOf, type TwoPhaseState } from './index.ts';

const isSmallInt = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 31;

export function twoPhaseProperties(resourceManagers: number): readonly Property<TwoPhaseState>[] {
  const allRms = (1 << resourceManagers) - 1;
  const rms = Array.from({ length: resourceManagers }, (_, rm) => rm);
  const isSetOfRms = (set: number) => isSmallInt(set) && (set & ~allRms) === 0;
  return [
    {
      name: 'TPTypeOK',
      description: 'every variable holds a value of its type',
      // Each RM's two bits always name an RmState; what can go wrong is a bit outside the ranges.
      holds: (s) =>
        isSmallInt(s.rmState) &&
        s.rmState < 4 ** resourceManagers &&
        (s.tmState === TmState.Init || s.tmState === TmState.Committed || s.tmState === TmState.Aborted) &&
        isSetOfRms(s.tmPrepared) &&
        isSetOfRms(s.msgs & ~(Msg.Commit | Msg.Abort)),
    },
    {
      name: 'TCConsistent',
      description: 'no resource manager commits while another aborts',
      holds: (s) =>
        !(
          rms.some((rm) => rmStateOf(s, rm) === RmState.Aborted) &&
          rms.some((rm) => rmStateOf(s, rm) === RmState.Committed)
        ),
    },
  ];
}
