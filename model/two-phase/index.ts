// Lamport's two-phase commit (TwoPhase.tla): a transaction manager (TM), N resource managers
// (RMs) and a set of messages that only grows. Receiving a message is enabled by its presence
// in the set, so a message can be received any number of times.
//
// The state is four small integers (sets of RMs as bit sets, rmState two bits per RM): cheap to
// copy, hash and compare, which makes this model the engine's speed yardstick. `view` gives the
// TLA+ names back for traces.
import { type Model, type Property, asMap, asSet } from '../../checker/engine/model.ts';

export const RmState = { Working: 0, Prepared: 1, Committed: 2, Aborted: 3 } as const;
export const TmState = { Init: 0, Committed: 1, Aborted: 2 } as const;
const rmStateNames = ['working', 'prepared', 'committed', 'aborted'];
const tmStateNames = ['init', 'committed', 'aborted'];

/** Messages as members of the `msgs` bit set: Prepared from rm i is bit i. */
export const Msg = { Commit: 1 << 30, Abort: 1 << 29, prepared: (rm: number) => 1 << rm } as const;
export const MAX_RESOURCE_MANAGERS = 12;

export interface TwoPhaseState {
  /** The set of messages sent (see Msg). */
  readonly msgs: number;
  /** Two bits per RM: the RmState of rm i is rmStateOf(s, i). */
  readonly rmState: number;
  /** The set of RMs whose Prepared message the TM has received: bit i for rm i. */
  readonly tmPrepared: number;
  readonly tmState: number;
}

export function rmStateOf(s: TwoPhaseState, rm: number): number {
  return (s.rmState >>> (2 * rm)) & 3;
}

function withRmState(rmState: number, rm: number, value: number): number {
  return (rmState & ~(3 << (2 * rm))) | (value << (2 * rm));
}

const has = (set: number, member: number) => (set & member) !== 0;

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
/** Indices into actionKinds, for the `successors` fast path. */
const Kind = {
  TMCommit: 0,
  TMAbort: 1,
  TMRcvPrepared: 2,
  RMPrepare: 3,
  RMChooseToAbort: 4,
  RMRcvCommitMsg: 5,
  RMRcvAbortMsg: 6,
} as const;

export interface TwoPhaseAction {
  readonly kind: ActionKind;
  /** The RM the action is about; -1 for the TM's own actions. */
  readonly rm: number;
  readonly label: string;
}

/** Rules broken on purpose, each with what it breaks. */
export const mutantDescriptions = {
  'commit-without-all-prepared': 'the TM may commit before every RM has prepared',
} as const;
export type Mutant = keyof typeof mutantDescriptions;
export const mutants = Object.keys(mutantDescriptions) as Mutant[];

export interface TwoPhaseParams {
  readonly resourceManagers: number;
  /** A deliberately broken variant, to show that the checker catches it. */
  readonly mutant?: Mutant;
}

export function rmName(rm: number): string {
  return `rm${rm + 1}`;
}

export function twoPhaseModel(
  params: TwoPhaseParams,
  invariants: readonly Property<TwoPhaseState>[],
): Model<TwoPhaseState, TwoPhaseAction> {
  const n = params.resourceManagers;
  const allRms = (1 << n) - 1;
  const commitNeedsAllPrepared = params.mutant !== 'commit-without-all-prepared';
  const tmAction = (kind: ActionKind): TwoPhaseAction => ({ kind, rm: -1, label: kind });
  const rmAction = (kind: ActionKind, rm: number): TwoPhaseAction => ({
    kind,
    rm,
    label: `${kind}(${rmName(rm)})`,
  });
  const tmCommit = tmAction('TMCommit');
  const tmAbort = tmAction('TMAbort');
  const perRm = Array.from({ length: n }, (_, rm) => ({
    rcvPrepared: rmAction('TMRcvPrepared', rm),
    prepare: rmAction('RMPrepare', rm),
    chooseToAbort: rmAction('RMChooseToAbort', rm),
    rcvCommit: rmAction('RMRcvCommitMsg', rm),
    rcvAbort: rmAction('RMRcvAbortMsg', rm),
  }));

  // The guards and effects, shared by `actions`/`next` and the `successors` fast path.
  const canCommit = (s: TwoPhaseState) =>
    s.tmState === TmState.Init && (s.tmPrepared === allRms || !commitNeedsAllPrepared);
  const canRcvPrepared = (s: TwoPhaseState, rm: number) =>
    s.tmState === TmState.Init && has(s.msgs, Msg.prepared(rm));
  const isWorking = (s: TwoPhaseState, rm: number) => rmStateOf(s, rm) === RmState.Working;
  const tmCommitNext = ({ msgs, rmState, tmPrepared }: TwoPhaseState): TwoPhaseState => ({
    msgs: msgs | Msg.Commit,
    rmState,
    tmPrepared,
    tmState: TmState.Committed,
  });
  const tmAbortNext = ({ msgs, rmState, tmPrepared }: TwoPhaseState): TwoPhaseState => ({
    msgs: msgs | Msg.Abort,
    rmState,
    tmPrepared,
    tmState: TmState.Aborted,
  });
  const tmRcvPreparedNext = (
    { msgs, rmState, tmPrepared, tmState }: TwoPhaseState,
    rm: number,
  ): TwoPhaseState => ({ msgs, rmState, tmPrepared: tmPrepared | (1 << rm), tmState });
  const rmPrepareNext = (
    { msgs, rmState, tmPrepared, tmState }: TwoPhaseState,
    rm: number,
  ): TwoPhaseState => ({
    msgs: msgs | Msg.prepared(rm),
    rmState: withRmState(rmState, rm, RmState.Prepared),
    tmPrepared,
    tmState,
  });
  const rmBecomes = (
    { msgs, rmState, tmPrepared, tmState }: TwoPhaseState,
    rm: number,
    value: number,
  ): TwoPhaseState => ({
    msgs,
    rmState: withRmState(rmState, rm, value),
    tmPrepared,
    tmState,
  });

  return {
    actionKinds,
    invariants,

    init: () => [{ msgs: 0, rmState: 0, tmPrepared: 0, tmState: TmState.Init }],

    actions(s) {
      const enabled: TwoPhaseAction[] = [];
      if (canCommit(s)) enabled.push(tmCommit);
      if (s.tmState === TmState.Init) enabled.push(tmAbort);
      const commitSent = has(s.msgs, Msg.Commit);
      const abortSent = has(s.msgs, Msg.Abort);
      for (let rm = 0; rm < n; rm++) {
        const a = perRm[rm]!;
        if (canRcvPrepared(s, rm)) enabled.push(a.rcvPrepared);
        if (isWorking(s, rm)) enabled.push(a.prepare, a.chooseToAbort);
        if (commitSent) enabled.push(a.rcvCommit);
        if (abortSent) enabled.push(a.rcvAbort);
      }
      return enabled;
    },

    next(s, a) {
      switch (a.kind) {
        case 'TMCommit':
          return tmCommitNext(s);
        case 'TMAbort':
          return tmAbortNext(s);
        case 'TMRcvPrepared':
          return tmRcvPreparedNext(s, a.rm);
        case 'RMPrepare':
          return rmPrepareNext(s, a.rm);
        case 'RMChooseToAbort':
        case 'RMRcvAbortMsg':
          return rmBecomes(s, a.rm, RmState.Aborted);
        case 'RMRcvCommitMsg':
          return rmBecomes(s, a.rm, RmState.Committed);
      }
    },

    successors(s, emit) {
      let i = 0;
      if (canCommit(s)) emit(tmCommitNext(s), i++, Kind.TMCommit);
      if (s.tmState === TmState.Init) emit(tmAbortNext(s), i++, Kind.TMAbort);
      const commitSent = has(s.msgs, Msg.Commit);
      const abortSent = has(s.msgs, Msg.Abort);
      for (let rm = 0; rm < n; rm++) {
        if (canRcvPrepared(s, rm)) emit(tmRcvPreparedNext(s, rm), i++, Kind.TMRcvPrepared);
        if (isWorking(s, rm)) {
          emit(rmPrepareNext(s, rm), i++, Kind.RMPrepare);
          emit(rmBecomes(s, rm, RmState.Aborted), i++, Kind.RMChooseToAbort);
        }
        if (commitSent) emit(rmBecomes(s, rm, RmState.Committed), i++, Kind.RMRcvCommitMsg);
        if (abortSent) emit(rmBecomes(s, rm, RmState.Aborted), i++, Kind.RMRcvAbortMsg);
      }
    },

    pack(s, words) {
      words[0] = s.msgs;
      words[1] = s.rmState;
      words[2] = s.tmPrepared;
      words[3] = s.tmState;
      return 4;
    },

    unpack: (words) => ({ msgs: words[0]!, rmState: words[1]!, tmPrepared: words[2]!, tmState: words[3]! }),

    label: (a) => a.label,
    kind: (a) => a.kind,

    view: (s) => {
      const rms = Array.from({ length: n }, (_, rm) => rm);
      const prepared = rms
        .filter((rm) => has(s.msgs, Msg.prepared(rm)))
        .map((rm) => ({ type: 'Prepared', rm: rmName(rm) }));
      // TwoPhase.tla: rmState is a function of RM, tmPrepared and msgs are sets.
      return {
        rmState: asMap(Object.fromEntries(rms.map((rm) => [rmName(rm), rmStateNames[rmStateOf(s, rm)]]))),
        tmState: tmStateNames[s.tmState] ?? s.tmState,
        tmPrepared: asSet(rms.filter((rm) => has(s.tmPrepared, 1 << rm)).map(rmName)),
        msgs: asSet([
          ...(has(s.msgs, Msg.Commit) ? [{ type: 'Commit' }] : []),
          ...(has(s.msgs, Msg.Abort) ? [{ type: 'Abort' }] : []),
          ...prepared,
        ]),
      };
    },
  };
}
