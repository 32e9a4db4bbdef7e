// Lamport's two-phase commit (TwoPhase.tla): a transaction manager (TM), N resource managers
// (RMs) and a set of messages that only grows. Receiving a message is enabled by its presence
// in the set, so a message can be received any number of times.
//
// Enums are small integers inside states (cheap to hash); `view` gives the names back.
import type { Model, Property } from '../../checker/model.ts';

export const RmState = { Working: 0, Prepared: 1, Committed: 2, Aborted: 3 } as const;
export const TmState = { Init: 0, Committed: 1, Aborted: 2 } as const;
const rmStateNames = ['working', 'prepared', 'committed', 'aborted'];
const tmStateNames = ['init', 'committed', 'aborted'];

/** A message is a number: Prepared from rm i is i; Commit and Abort are negative. */
export const Msg = { Commit: -2, Abort: -1 } as const;

/** Keys in alphabetical order, so fingerprinting takes its no-sort path. */
export interface TwoPhaseState {
  /** Sorted, without repeats. */
  readonly msgs: readonly number[];
  /** rmState[i] is the RmState of rm i. */
  readonly rmState: readonly number[];
  /** The RMs whose Prepared message the TM has received: sorted, without repeats. */
  readonly tmPrepared: readonly number[];
  readonly tmState: number;
}

export const actionKinds = [
  'TMCommit',
  'TMAbort',
  'TMRcvPrepared',
  'RMPrepare',
  'RMChooseToAbort',
  'RMRcvCommitMsg',
  'RMRcvAbortMsg',
] as const;
export type ActionKind = (typeof actionKinds)[number];

export interface TwoPhaseAction {
  readonly kind: ActionKind;
  /** The RM the action is about; -1 for the TM's own actions. */
  readonly rm: number;
  readonly label: string;
}

export const mutants = ['commit-without-all-prepared'] as const;
export type Mutant = (typeof mutants)[number];

export interface TwoPhaseParams {
  readonly resourceManagers: number;
  /** A deliberately broken variant, to show that the checker catches it. */
  readonly mutant?: Mutant;
}

export function rmName(rm: number): string {
  return `rm${rm + 1}`;
}

/** The sorted set `set` with `x` added; `set` itself when `x` is already in it. */
function withMember(set: readonly number[], x: number): readonly number[] {
  let at = 0;
  while (at < set.length && set[at]! < x) at++;
  if (set[at] === x) return set;
  return [...set.slice(0, at), x, ...set.slice(at)];
}

function withRmState(rmState: readonly number[], rm: number, value: number): readonly number[] {
  const copy = rmState.slice();
  copy[rm] = value;
  return copy;
}

export function twoPhaseModel(
  params: TwoPhaseParams,
  invariants: readonly Property<TwoPhaseState>[],
): Model<TwoPhaseState, TwoPhaseAction> {
  const n = params.resourceManagers;
  const commitNeedsAllPrepared = params.mutant !== 'commit-without-all-prepared';
  const tmAction = (kind: ActionKind): TwoPhaseAction => ({ kind, rm: -1, label: kind });
  const rmAction = (kind: ActionKind, rm: number): TwoPhaseAction => ({ kind, rm, label: `${kind}(${rmName(rm)})` });
  const tmCommit = tmAction('TMCommit');
  const tmAbort = tmAction('TMAbort');
  const perRm = Array.from({ length: n }, (_, rm) => ({
    rcvPrepared: rmAction('TMRcvPrepared', rm),
    prepare: rmAction('RMPrepare', rm),
    chooseToAbort: rmAction('RMChooseToAbort', rm),
    rcvCommit: rmAction('RMRcvCommitMsg', rm),
    rcvAbort: rmAction('RMRcvAbortMsg', rm),
  }));

  return {
    actionKinds,
    invariants,

    init: () => [{ msgs: [], rmState: new Array<number>(n).fill(RmState.Working), tmPrepared: [], tmState: TmState.Init }],

    actions(s) {
      const enabled: TwoPhaseAction[] = [];
      const tmInit = s.tmState === TmState.Init;
      if (tmInit && (s.tmPrepared.length === n || !commitNeedsAllPrepared)) enabled.push(tmCommit);
      if (tmInit) enabled.push(tmAbort);
      const commitSent = s.msgs.includes(Msg.Commit);
      const abortSent = s.msgs.includes(Msg.Abort);
      for (let rm = 0; rm < n; rm++) {
        const a = perRm[rm]!;
        const working = s.rmState[rm] === RmState.Working;
        if (tmInit && s.msgs.includes(rm)) enabled.push(a.rcvPrepared);
        if (working) enabled.push(a.prepare, a.chooseToAbort);
        if (commitSent) enabled.push(a.rcvCommit);
        if (abortSent) enabled.push(a.rcvAbort);
      }
      return enabled;
    },

    next(s, a) {
      const { msgs, rmState, tmPrepared, tmState } = s;
      switch (a.kind) {
        case 'TMCommit':
          return { msgs: withMember(msgs, Msg.Commit), rmState, tmPrepared, tmState: TmState.Committed };
        case 'TMAbort':
          return { msgs: withMember(msgs, Msg.Abort), rmState, tmPrepared, tmState: TmState.Aborted };
        case 'TMRcvPrepared':
          return { msgs, rmState, tmPrepared: withMember(tmPrepared, a.rm), tmState };
        case 'RMPrepare':
          return { msgs: withMember(msgs, a.rm), rmState: withRmState(rmState, a.rm, RmState.Prepared), tmPrepared, tmState };
        case 'RMChooseToAbort':
        case 'RMRcvAbortMsg':
          return { msgs, rmState: withRmState(rmState, a.rm, RmState.Aborted), tmPrepared, tmState };
        case 'RMRcvCommitMsg':
          return { msgs, rmState: withRmState(rmState, a.rm, RmState.Committed), tmPrepared, tmState };
      }
    },

    label: (a) => a.label,
    kind: (a) => a.kind,

    view: (s) => ({
      rmState: Object.fromEntries(s.rmState.map((v, rm) => [rmName(rm), rmStateNames[v] ?? v])),
      tmState: tmStateNames[s.tmState] ?? s.tmState,
      tmPrepared: s.tmPrepared.map(rmName),
      msgs: s.msgs.map((m) =>
        m === Msg.Commit ? { type: 'Commit' } : m === Msg.Abort ? { type: 'Abort' } : { type: 'Prepared', rm: rmName(m) },
      ),
    }),
  };
}
