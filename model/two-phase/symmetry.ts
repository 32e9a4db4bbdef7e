// Symmetry reduction for TwoPhase: the resource managers are interchangeable (TLC's
// Permutations(RM)), so a state stands for every state that renames them. The representative
// lists the RMs sorted by what the state says about each: its rmState, whether the TM has its
// Prepared message, and whether that message was sent.
import { Msg, type TwoPhaseState, rmStateOf } from './index.ts';

export function twoPhaseCanonical(resourceManagers: number): (s: TwoPhaseState) => TwoPhaseState {
  const profiles = new Int32Array(resourceManagers);
  return (s) => {
    for (let rm = 0; rm < resourceManagers; rm++) {
      profiles[rm] = (rmStateOf(s, rm) << 2) | (((s.tmPrepared >>> rm) & 1) << 1) | ((s.msgs >>> rm) & 1);
    }
    profiles.sort();
    let rmState = 0;
    let tmPrepared = 0;
    let msgs = s.msgs & (Msg.Commit | Msg.Abort);
    for (let rm = 0; rm < resourceManagers; rm++) {
      const p = profiles[rm]!;
      rmState |= (p >>> 2) << (2 * rm);
      tmPrepared |= ((p >>> 1) & 1) << rm;
      msgs |= (p & 1) << rm;
    }
    return { msgs, rmState, tmPrepared, tmState: s.tmState };
  };
}
