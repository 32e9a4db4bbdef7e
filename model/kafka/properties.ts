// Safety properties of the Kafka transaction model. They read the ghost history and the logs;
// the protocol handlers never read the ghost fields these rely on. Logs only grow, a batch's
// outcome is its first marker's, and a begun transaction stays fenced: so AtomicCommit,
// ZombieFencing and Idempotence, once broken, stay broken (`stable`).
import type { Property } from '../../checker/engine/model.ts';
import { knownTransaction } from './coordinator.ts';
import { committedOffset } from './group.ts';
import { batchOutcome, lastStableOffset } from './partition.ts';
import {
  type LogBatch,
  type State,
  Api,
  BatchKind,
  Decision,
  Err,
  Excuse,
  Instance,
  NO_OFFSET,
  NO_STATE,
  Outcome,
  Tm,
  Told,
  TxnState,
} from './state.ts';

/**
 * Calls `visit` for every transactional record (data or offset commit) with how its transaction
 * ended where it was written; stops early when `visit` returns false.
 */
function everyRecord(
  s: State,
  visit: (b: LogBatch, outcome: Outcome, partition: number) => boolean,
): boolean {
  for (let p = 0; p < s.partitions.length; p++) {
    const part = s.partitions[p]!;
    for (let o = 0; o < part.log.length; o++) {
      const b = part.log[o]!;
      if (
        b.transactional &&
        (b.kind === BatchKind.Data || b.kind === BatchKind.OffsetCommit) &&
        !visit(b, batchOutcome(part, o), p)
      )
        return false;
    }
  }
  return true;
}

/** With the transform app, the last partition is the group's __consumer_offsets. */
function dataPartitions(s: State): number {
  return s.group === null ? s.partitions.length : s.partitions.length - 1;
}

const readCommittedIsolation: Property<State> = {
  name: 'ReadCommittedIsolation',
  description:
    'a read_committed consumer delivers only records of transactions the application committed, and never reads past the LSO',
  holds(s) {
    for (const c of s.consumers) {
      if (!c.readCommitted) continue;
      for (const d of c.delivered)
        if (
          s.partitions[d.partition]!.log[d.offset]!.transactional &&
          s.history[d.ghostTxn]!.decision !== Decision.Commit
        )
          return false;
      for (let p = 0; p < c.position.length; p++)
        if (c.position[p]! > lastStableOffset(s.partitions[p]!)) return false;
    }
    return true;
  },
};

/**
 * ReadCommittedIsolation with the consumers off the state: a read_committed fetch may come at
 * any moment and returns every data record below the LSO whose transaction did not abort, so a
 * record there of a transaction the application did not commit is what some consumer could
 * deliver now. (Reading past the LSO is a consumer's fault, and no consumer is modelled.)
 */
export const readCommittedIsolationOnLogs: Property<State> = {
  name: readCommittedIsolation.name,
  description: `${readCommittedIsolation.description} (checked on what a read_committed fetch would return now)`,
  holds(s) {
    for (let p = 0; p < dataPartitions(s); p++) {
      const part = s.partitions[p]!;
      const lso = lastStableOffset(part);
      for (let o = 0; o < lso; o++) {
        const b = part.log[o]!;
        if (
          b.kind === BatchKind.Data &&
          b.transactional &&
          batchOutcome(part, o) !== Outcome.Aborted &&
          s.history[b.ghostTxn]!.decision !== Decision.Commit
        )
          return false;
      }
    }
    return true;
  },
};

const COMMITTED = 1;
const ABORTED = 2;

const atomicCommit: Property<State> = {
  name: 'AtomicCommit',
  description:
    'no client transaction has one record or offset commit committed while another of its records or offset commits is aborted',
  stable: true,
  holds(s) {
    // Per client transaction, the outcomes its records met: cheaper than two Sets per state.
    const met = new Array<number>(s.history.length).fill(0);
    return everyRecord(s, (b, outcome) => {
      if (outcome === Outcome.Committed) met[b.ghostTxn]! |= COMMITTED;
      else if (outcome === Outcome.Aborted) met[b.ghostTxn]! |= ABORTED;
      return met[b.ghostTxn] !== (COMMITTED | ABORTED);
    });
  },
};

const noLostWrite: Property<State> = {
  name: 'NoLostWrite',
  description:
    'once the client was told a commit succeeded, every record of that transaction is in a log and none is aborted',
  holds(s) {
    const present = new Set<number>();
    const ok = everyRecord(s, (b, outcome) => {
      if (b.kind !== BatchKind.Data || s.history[b.ghostTxn]!.told !== Told.Committed) return true;
      present.add(b.ghostTxn * 1024 + b.ghostRecord);
      return outcome !== Outcome.Aborted;
    });
    if (!ok) return false;
    for (let t = 0; t < s.history.length; t++) {
      const h = s.history[t]!;
      if (h.told !== Told.Committed) continue;
      for (let r = 0; r < h.recordsSent; r++) if (!present.has(t * 1024 + r)) return false;
    }
    return true;
  },
};

const zombieFencing: Property<State> = {
  name: 'ZombieFencing',
  description:
    'once the coordinator granted a newer epoch to another instance of a transactional.id, no transaction of the older instance that was not yet prepared commits anything',
  stable: true,
  holds(s) {
    return everyRecord(s, (b, outcome) => outcome !== Outcome.Committed || !s.history[b.ghostTxn]!.fenced);
  },
};

// An idempotent producer keeps the order of its records per partition across retries and epoch
// bumps (KIP-360); that covers the records the application was told failed too, since their bytes
// may still be written.
const idempotence: Property<State> = {
  name: 'Idempotence',
  description:
    "no partition holds the same record twice, and an idempotent producer's records are in a partition in the order it sent them",
  stable: true,
  holds(s) {
    // Logs are a few batches long: scanning back beats a Set and a Map per partition.
    for (const part of s.partitions) {
      const log = part.log;
      for (let o = 0; o < log.length; o++) {
        const b = log[o]!;
        if (b.kind !== BatchKind.Data) continue;
        for (let q = 0; q < o; q++) {
          const c = log[q]!;
          if (
            c.kind === BatchKind.Data &&
            c.transactional === b.transactional &&
            c.ghostTxn === b.ghostTxn &&
            c.ghostRecord === b.ghostRecord
          )
            return false;
        }
        if (b.transactional) continue;
        for (let q = o - 1; q >= 0; q--) {
          const c = log[q]!;
          if (c.kind === BatchKind.Data && !c.transactional && c.ghostTxn === b.ghostTxn) {
            if (b.ghostRecord < c.ghostRecord) return false;
            break;
          }
        }
      }
    }
    return true;
  },
};

const exactlyOnce: Property<State> = {
  name: 'ExactlyOnce',
  description:
    "consume-transform-produce: no input record has two committed outputs, the group's committed offset never passes an input whose outputs all aborted, and a committed output always has its offset committed or pending",
  holds(s) {
    if (s.group === null) return true;
    const offsets = s.partitions[s.partitions.length - 1]!;
    const committedUpTo = committedOffset(offsets);
    let pendingUpTo = committedUpTo;
    everyRecord(s, (b, outcome, p) => {
      if (p === s.partitions.length - 1 && outcome === Outcome.Open && b.value > pendingUpTo)
        pendingUpTo = b.value;
      return true;
    });
    const committedOutputs = new Map<number, number>();
    const liveOutputs = new Set<number>();
    const data = dataPartitions(s);
    everyRecord(s, (b, outcome, p) => {
      if (p >= data) return true;
      if (outcome === Outcome.Committed)
        committedOutputs.set(b.value, (committedOutputs.get(b.value) ?? 0) + 1);
      if (outcome !== Outcome.Aborted) liveOutputs.add(b.value);
      return true;
    });
    for (const [input, count] of committedOutputs) {
      if (count > 1) return false;
      if (input >= pendingUpTo) return false;
    }
    for (let input = 0; input < committedUpTo; input++) if (!liveOutputs.has(input)) return false;
    return true;
  },
};

/**
 * TransactionState.validPreviousStates as written to __transaction_state, in its latest form:
 * transaction version 2 also lets an empty abort move Empty and Complete* to PrepareAbort.
 */
export const VALID_PREVIOUS: Record<number, readonly number[]> = {
  [TxnState.Empty]: [NO_STATE, TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.Ongoing]: [TxnState.Ongoing, TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.PrepareCommit]: [TxnState.Ongoing],
  [TxnState.PrepareAbort]: [
    TxnState.Ongoing,
    TxnState.PrepareEpochFence,
    TxnState.Empty,
    TxnState.CompleteCommit,
    TxnState.CompleteAbort,
  ],
  [TxnState.CompleteCommit]: [TxnState.PrepareCommit],
  [TxnState.CompleteAbort]: [TxnState.PrepareAbort],
};

const coordinatorTransitions: Property<State> = {
  name: 'CoordinatorTransitions',
  description:
    "every coordinator state change follows Kafka's valid-previous-state table, and a producer id's epoch never decreases",
  holds(s) {
    for (const r of s.coordinator.log) {
      if (r === null) continue;
      if (!(VALID_PREVIOUS[r.state] ?? []).includes(r.ghostPrevState)) return false;
      if (r.pid === r.ghostPrevPid && r.epoch < r.ghostPrevEpoch) return false;
    }
    return true;
  },
};

const noHangingTransaction: Property<State> = {
  name: 'NoHangingTransaction',
  description:
    'every open transaction at a partition is still covered by the coordinator: its transaction lists the partition, or a marker for it is on the way',
  holds(s) {
    for (let p = 0; p < s.partitions.length; p++) {
      for (const e of s.partitions[p]!.producers) {
        if (e.txnFirstOffset === NO_OFFSET) continue;
        const covered = s.coordinator.metadata.some((_, t) => {
          const md = knownTransaction(s, t);
          return (
            md !== null &&
            md.pid === e.pid &&
            (md.state === TxnState.Ongoing ||
              md.state === TxnState.PrepareCommit ||
              md.state === TxnState.PrepareAbort) &&
            (md.partitions & (1 << p)) !== 0
          );
        });
        const markerOnTheWay = s.network.some((ch) =>
          ch.messages.some(
            (m) => !m.response && m.api === Api.WriteTxnMarkers && m.pid === e.pid && m.partitions === p,
          ),
        );
        if (!covered && !markerOnTheWay) return false;
      }
    }
    return true;
  },
};

/** Client states in which the producer holds a producer id and epoch the coordinator granted. */
const holdsGrant: ReadonlySet<number> = new Set([
  Tm.READY,
  Tm.IN_TRANSACTION,
  Tm.COMMITTING_TRANSACTION,
  Tm.ABORTING_TRANSACTION,
  Tm.ABORTABLE_ERROR,
]);

// The client only ever takes its producer id and epoch from the coordinator's answers, and the
// coordinator only moves a transactional.id's epoch forward (TransactionMetadata, every release).
// Under transaction version 2 an EndTxn at an exhausted epoch answers the producer id its
// completion rotates to (nextProducerId) before the coordinator installs it, and the rotation may
// complete before the answer arrives (the coordinator then keeps the id it left). An instance
// another one has fenced, or whose transactional.id expired, may hold an id the coordinator has
// since replaced or forgotten.
/** What may leave a running producer with a producer id its transactional.id no longer has. */
const REPLACING = Excuse.OtherInstance | Excuse.TransactionalIdExpired | Excuse.TransactionTimedOut;

const producerIdAgreement: Property<State> = {
  name: 'ProducerIdAgreement',
  description:
    "a running producer that holds a producer id has the one its transactional.id has at the coordinator (or the one it rotates to next), at an epoch no higher than the coordinator's, unless another instance, an expiry or a timeout replaced it",
  holds(s) {
    for (const p of s.producers) {
      if (p.status !== Instance.Running || !holdsGrant.has(p.tm)) continue;
      const md = knownTransaction(s, p.txnId);
      // The coordinator forgot an expired transactional.id's producer id.
      if (md === null) {
        if ((p.ghostExcuses & Excuse.TransactionalIdExpired) === 0) return false;
        continue;
      }
      const current = md.pid === p.pid && p.epoch <= md.epoch;
      const next = md.nextPid === p.pid && p.epoch === 0;
      const answerOnTheWay = md.prevPid === p.pid && p.request?.api === Api.EndTxn;
      // A timeout at an exhausted epoch rotates the producer id once the abort completes, and the
      // timed-out producer keeps the old one: Kafka intends it (KAFKA-20090, 4.3.0, PR #21506;
      // TransactionCoordinatorTest shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyAndLateClientAbortRequestTV2).
      // Without the rotation a timeout keeps the producer id, so the excuse covers nothing else.
      const replaced = md.pid !== p.pid && (p.ghostExcuses & REPLACING) !== 0;
      if (!current && !next && !answerOnTheWay && !replaced) return false;
    }
    return true;
  },
};

// Kafka fences a producer, or fails it for good, because another instance took over its
// transactional.id or the coordinator ended its transaction (timeout, expiry); any other FATAL
// error is a failure the protocol should have let it recover from.
const noSpuriousFatal: Property<State> = {
  name: 'NoSpuriousFatal',
  description:
    'a producer goes FATAL (PRODUCER_FENCED included) only after another instance of its transactional.id fenced it (InitProducerId), or the coordinator timed out or expired its transaction',
  holds(s) {
    return s.producers.every((p) => p.tm !== Tm.FATAL_ERROR || p.ghostExcuses !== 0);
  },
};

// A coordinator's timeout abort fences the producer: the error that fails it is a fencing one,
// PRODUCER_FENCED (or INVALID_PRODUCER_EPOCH, which clients before KIP-588 took for it). Kafka
// treats an INVALID_TXN_STATE there as a bug (KAFKA-19690); NoSpuriousFatal excuses both.
const fencedByTimeout: ReadonlySet<number> = new Set([Err.PRODUCER_FENCED, Err.INVALID_PRODUCER_EPOCH]);

const timedOutProducerFenced: Property<State> = {
  name: 'TimedOutProducerFenced',
  description:
    'a producer that goes FATAL with nothing but a coordinator timeout of its transaction to excuse it goes FATAL on a fencing error (PRODUCER_FENCED or INVALID_PRODUCER_EPOCH), not on INVALID_TXN_STATE or another error',
  holds(s) {
    return s.producers.every(
      (p) =>
        p.tm !== Tm.FATAL_ERROR ||
        p.ghostExcuses !== Excuse.TransactionTimedOut ||
        fencedByTimeout.has(p.ghostFatalError),
    );
  },
};

// Kafka's marker channel re-sends a marker until it is written; the coordinator gives a Prepare*
// transaction up only on a fencing answer (TransactionMarkerRequestCompletionHandler), after which
// it never completes.
const coordinatorNotStuck: Property<State> = {
  name: 'CoordinatorNotStuck',
  description:
    'the coordinator never stops sending the markers of a PrepareCommit or PrepareAbort transaction without completing it',
  holds(s) {
    // A coordinator that is loading has sent nothing yet; it sends every Prepare*'s markers once loaded.
    return (
      s.coordinator.loading ||
      s.coordinator.metadata.every(
        (md) =>
          md === null ||
          !(md.state === TxnState.PrepareCommit || md.state === TxnState.PrepareAbort) ||
          md.pendingState !== NO_STATE,
      )
    );
  },
};

export const kafkaProperties: readonly Property<State>[] = [
  readCommittedIsolation,
  atomicCommit,
  noLostWrite,
  zombieFencing,
  idempotence,
  exactlyOnce,
  coordinatorTransitions,
  noHangingTransaction,
  producerIdAgreement,
  noSpuriousFatal,
  coordinatorNotStuck,
  timedOutProducerFenced,
];
