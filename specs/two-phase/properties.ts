// The invariants of TwoPhase.tla (TPTypeOK) and of the TCommit spec it implements (TCConsistent).
import type { Property } from '../../checker/model.ts';
import { Msg, RmState, TmState, type TwoPhaseState } from '../../model/two-phase/index.ts';

function isSortedSetOf(list: readonly number[], isMember: (x: number) => boolean): boolean {
  return list.every((x, i) => Number.isInteger(x) && isMember(x) && (i === 0 || list[i - 1]! < x));
}

export function twoPhaseProperties(resourceManagers: number): readonly Property<TwoPhaseState>[] {
  const isRm = (x: number) => x >= 0 && x < resourceManagers;
  return [
    {
      name: 'TPTypeOK',
      description: 'every variable holds a value of its type',
      holds: (s) =>
        s.rmState.length === resourceManagers &&
        s.rmState.every((v) => v === RmState.Working || v === RmState.Prepared || v === RmState.Committed || v === RmState.Aborted) &&
        (s.tmState === TmState.Init || s.tmState === TmState.Committed || s.tmState === TmState.Aborted) &&
        isSortedSetOf(s.tmPrepared, isRm) &&
        isSortedSetOf(s.msgs, (m) => m === Msg.Commit || m === Msg.Abort || isRm(m)),
    },
    {
      name: 'TCConsistent',
      description: 'no resource manager commits while another aborts',
      holds: (s) => !(s.rmState.includes(RmState.Aborted) && s.rmState.includes(RmState.Committed)),
    },
  ];
}
