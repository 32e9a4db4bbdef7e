// Liveness properties of the Kafka transaction model, as leads-to goals over states (P ~> Q), one
// goal per parameter value. They read the state through the small helpers below only.
//
// LsoAdvances is stated per record rather than per offset: the LSO can only be held back by the
// first record of an open transaction, so "the LSO eventually passes every offset below the HW"
// is "every record at or above the LSO eventually falls below it". Records are named by their
// client transaction (the ghost history index), of which the spec's bounds give a fixed number.
import type { Goal } from '../../checker/engine/model.ts';
import type { KafkaConfig } from './config.ts';
import { knownTransaction } from './coordinator.ts';
import { batchOutcome, isMarker, lastStableOffset } from './partition.ts';
import { type State, BatchKind, Outcome, TxnState } from './state.ts';

function clientTransactions(cfg: KafkaConfig): number {
  return cfg.transactionalIds * cfg.instancesPerId * cfg.transactionsPerInstance;
}

/** The coordinator's state of a transactional.id (while it loads, the logged one), or undefined when it knows none. */
function coordinatorState(s: State, txnId: number): number | undefined {
  return knownTransaction(s, txnId)?.state;
}

/** Every partition with a log: the data partitions, then __consumer_offsets with the transform app. */
function logPartitions(cfg: KafkaConfig): number {
  return cfg.partitions + (cfg.app === 'consume-transform-produce' ? 1 : 0);
}

/** Offsets of the transactional records (data or offset commits) of client transaction `txn` in partition `p`. */
function recordOffsets(s: State, p: number, txn: number): number[] {
  const out: number[] = [];
  s.partitions[p]!.log.forEach((b, offset) => {
    if (b.transactional && !isMarker(b) && b.ghostTxn === txn) out.push(offset);
  });
  return out;
}

/** Consumers are created read_committed first (model/kafka/index.ts). */
function readCommittedConsumers(cfg: KafkaConfig): number[] {
  return Array.from({ length: cfg.consumers.readCommitted }, (_, c) => c);
}

const open = new Set<number>([
  TxnState.Ongoing,
  TxnState.PrepareCommit,
  TxnState.PrepareAbort,
  TxnState.PrepareEpochFence,
]);
const complete = new Set<number>([TxnState.CompleteCommit, TxnState.CompleteAbort]);

function transactionsComplete(cfg: KafkaConfig): Goal<State>[] {
  return Array.from({ length: cfg.transactionalIds }, (_, t) => ({
    kind: 'leadsTo',
    label: `TransactionsComplete[t${t}]`,
    p: (s) => open.has(coordinatorState(s, t) ?? -1),
    q: (s) => complete.has(coordinatorState(s, t) ?? -1),
  }));
}

function lsoAdvances(cfg: KafkaConfig): Goal<State>[] {
  const goals: Goal<State>[] = [];
  for (let p = 0; p < logPartitions(cfg); p++) {
    for (let txn = 0; txn < clientTransactions(cfg); txn++) {
      const unstable = (s: State) =>
        recordOffsets(s, p, txn).some((o) => o >= lastStableOffset(s.partitions[p]!));
      goals.push({
        kind: 'leadsTo',
        label: `LsoAdvances[p${p}, txn ${txn}]`,
        p: unstable,
        q: (s) => !unstable(s),
      });
    }
  }
  return goals;
}

function consumersProgress(cfg: KafkaConfig): Goal<State>[] {
  const goals: Goal<State>[] = [];
  for (const c of readCommittedConsumers(cfg)) {
    for (let p = 0; p < cfg.partitions; p++) {
      for (let txn = 0; txn < clientTransactions(cfg); txn++) {
        const waiting = (s: State) => {
          const { log } = s.partitions[p]!;
          const delivered = s.consumers[c]!.delivered;
          return recordOffsets(s, p, txn).some(
            (o) =>
              log[o]!.kind === BatchKind.Data &&
              batchOutcome(s.partitions[p]!, o) === Outcome.Committed &&
              !delivered.some((d) => d.partition === p && d.offset === o),
          );
        };
        goals.push({
          kind: 'leadsTo',
          label: `ConsumersProgress[C${c}, p${p}, txn ${txn}]`,
          p: waiting,
          q: (s) => !waiting(s),
        });
      }
    }
  }
  return goals;
}

/** A liveness property: its goals for the model's bounds. */
export interface KafkaLiveness {
  readonly name: string;
  readonly description: string;
  goals(cfg: KafkaConfig): readonly Goal<unknown>[];
  /** Why the property cannot be checked under `cfg`, if it cannot. */
  unavailable?(cfg: KafkaConfig): string | undefined;
}

export const kafkaLiveness: readonly KafkaLiveness[] = [
  {
    name: 'TransactionsComplete',
    description:
      'every Ongoing or Prepare* transaction at the coordinator eventually reaches CompleteCommit or CompleteAbort (per transactional.id)',
    goals: (cfg) => transactionsComplete(cfg) as Goal<unknown>[],
  },
  {
    name: 'LsoAdvances',
    description:
      "every partition's LSO (__consumer_offsets included) eventually passes every record below its high watermark (per partition and client transaction)",
    goals: (cfg) => lsoAdvances(cfg) as Goal<unknown>[],
  },
  {
    name: 'ConsumersProgress',
    description:
      'every read_committed consumer eventually delivers every committed record (per consumer, partition and client transaction)',
    goals: (cfg) => consumersProgress(cfg) as Goal<unknown>[],
    unavailable: (cfg) =>
      cfg.observers === 'off' ? 'the consumers\' deliveries, which "observers": "off" leaves out' : undefined,
  },
];
