// Why a property is violated, in Kafka's terms: the records, offsets, markers and coordinator
// state that break it, and the steps and messages that put them there.
import type { Explanation, View } from '../../../checker/report/renderer.ts';
import type { KafkaView, LogEntryView, PartitionView } from '../view.ts';
import { type Node, readNode, transactionalIdName } from '../labels.ts';
import { txnStateName } from '../state.ts';
import { VALID_PREVIOUS } from '../properties.ts';
import { steps } from './steps.ts';
import { endingMarker, isMarker, kafka, leaderOf } from './views.ts';

/** The first step whose state satisfies `test`. */
function firstStep(states: readonly KafkaView[], test: (s: KafkaView) => boolean): number {
  return states.findIndex(test);
}

function records(s: KafkaView): { part: PartitionView; e: LogEntryView }[] {
  return s.partitions.flatMap((part) =>
    part.log.filter((e) => e.kind === 'Data' || e.kind === 'OffsetCommit').map((e) => ({ part, e })),
  );
}

const where = (part: PartitionView, e: LogEntryView) => `${part.name} offset ${e.offset}`;

function endedBy(part: PartitionView, e: LogEntryView): string {
  const m = endingMarker(part, e.offset);
  return m === undefined
    ? 'still open'
    : `${m.kind === 'Commit' ? 'committed' : 'aborted'} by the ${m.kind.toUpperCase()} marker at offset ${m.offset}`;
}

function producerOf(clientTransaction: string): string {
  return clientTransaction.split('/')[0]!;
}

function hanging(states: readonly KafkaView[], labels: readonly string[]): Explanation | undefined {
  const s = states[states.length - 1]!;
  for (const part of s.partitions) {
    for (const entry of part.producers) {
      const first = entry.currentTxnFirstOffset;
      if (first < 0) continue;
      const covered = s.coordinator.transactions.some(
        (t) =>
          t.known &&
          t.producerId === entry.pid &&
          ['Ongoing', 'PrepareCommit', 'PrepareAbort'].includes(t.state) &&
          t.partitions.includes(part.name),
      );
      const markerOnTheWay = s.network.some((ch) =>
        ch.messages.some(
          (m) => m.api === 'WriteTxnMarkers' && m.pid === entry.pid && m.partitions.includes(part.name),
        ),
      );
      if (covered || markerOnTheWay) continue;
      const e = part.log[first]!;
      const appended = firstStep(
        states,
        (t) => (t.partitions.find((p) => p.name === part.name)?.log.length ?? 0) > first,
      );
      const sentAt = steps(states, labels)[appended - 1]?.events.find((ev) => ev.kind === 'message')?.sentAt;
      const marker = [...part.log.slice(0, first)].reverse().find((m) => isMarker(m) && m.pid === entry.pid);
      const txn = s.coordinator.transactions.find((t) => t.known && t.producerId === entry.pid);
      const arrival =
        sentAt === undefined
          ? `at step ${appended}`
          : `by the Produce sent at step ${sentAt} and delivered at step ${appended}`;
      const afterMarker =
        marker === undefined
          ? ''
          : `, after the ${marker.kind.toUpperCase()} marker at offset ${marker.offset} had already closed that producer's transaction there`;
      const listedBefore = states.some((t) =>
        t.coordinator.transactions.some(
          (x) => x.known && x.producerId === entry.pid && x.partitions.includes(part.name),
        ),
      );
      const tcSide =
        txn === undefined || !txn.known
          ? 'the coordinator knows no transaction of that producer id'
          : `the coordinator's ${txn.transactionalId} (${txn.state}, pid ${txn.producerId}, epoch ${txn.producerEpoch}) ${listedBefore ? 'no longer lists' : 'does not list'} ${part.name}`;
      return {
        text:
          `${part.name} offset ${first} holds a transactional batch (pid ${e.pid}, epoch ${e.epoch}, seq ${e.sequence}, ${e.clientTransaction}) written ${arrival}${afterMarker}; ` +
          `it opens a transaction at ${part.name}, but ${tcSide}, and no marker for ${part.name} is on the way, so nothing will ever commit or abort it: ` +
          `the LSO of ${part.name} stays at ${part.lastStableOffset} for good and read_committed consumers cannot read past offset ${part.lastStableOffset}.`,
        over: [producerOf(e.clientTransaction), 'TC', leaderOf(part.name)],
      };
    }
  }
  return undefined;
}

/** How the entry at `offset` of `partition` got there: the step, and the chain of messages that led to it. */
function origin(
  states: readonly KafkaView[],
  labels: readonly string[],
  partition: string,
  offset: number,
): string {
  const appended = firstStep(
    states,
    (t) => (t.partitions.find((p) => p.name === partition)?.log.length ?? 0) > offset,
  );
  const meanings = steps(states, labels);
  const delivered = (step: number) => meanings[step - 1]?.events.find((e) => e.kind === 'message');
  const message = delivered(appended);
  if (message?.kind !== 'message') return `written at step ${appended}`;
  let text = `written at step ${appended} by ${message.text.split('(')[0]} sent at step ${message.sentAt}`;
  const cause = message.sentAt === undefined ? undefined : delivered(message.sentAt);
  if (cause?.kind === 'message' && !cause.response && cause.sentAt !== undefined)
    text += ` in answer to ${cause.text} sent at step ${cause.sentAt}`;
  return text;
}

function readCommitted(states: readonly KafkaView[], labels: readonly string[]): Explanation | undefined {
  const s = states[states.length - 1]!;
  for (const c of s.consumers) {
    if (c.isolation !== 'read_committed') continue;
    for (const d of c.delivered) {
      const h = s.history.find((x) => x.clientTransaction === d.clientTransaction)!;
      if (h.decision === 'Commit') continue;
      const part = s.partitions.find((p) => p.name === d.partition)!;
      const e = part.log[d.offset]!;
      const decided = h.decision === 'None' ? 'has not called commit' : 'chose to abort';
      const marker = endingMarker(part, e.offset);
      const how =
        marker === undefined
          ? `still open at ${part.name}, at or beyond its LSO ${part.lastStableOffset}`
          : `${endedBy(part, e)} (${origin(states, labels, part.name, marker.offset)})`;
      return {
        text:
          `${c.name} (read_committed) delivered ${where(part, e)}, record ${d.record} of ${d.clientTransaction}, whose application ${decided}; ` +
          `the record is ${how}, so a reader saw data the application never committed.`,
        over: [c.name, leaderOf(part.name), producerOf(d.clientTransaction)],
      };
    }
    for (let q = 0; q < c.position.length; q++) {
      const part = s.partitions[q]!;
      if (c.position[q]! > part.lastStableOffset) {
        return {
          text: `${c.name} (read_committed) read ${part.name} up to offset ${c.position[q]}, past its LSO ${part.lastStableOffset}.`,
          over: [c.name, leaderOf(part.name)],
        };
      }
    }
  }
  return undefined;
}

function atomicCommit(s: KafkaView): Explanation | undefined {
  const all = records(s);
  for (const a of all) {
    if (endingMarker(a.part, a.e.offset)?.kind !== 'Commit') continue;
    const b = all.find(
      (x) =>
        x.e.clientTransaction === a.e.clientTransaction && endingMarker(x.part, x.e.offset)?.kind === 'Abort',
    );
    if (b === undefined) continue;
    return {
      text: `${a.e.clientTransaction} is half committed: ${where(a.part, a.e)} is ${endedBy(a.part, a.e)}, while ${where(b.part, b.e)} is ${endedBy(b.part, b.e)}.`,
      over: ['TC', leaderOf(a.part.name), leaderOf(b.part.name)],
    };
  }
  return undefined;
}

function noLostWrite(s: KafkaView): Explanation | undefined {
  for (const h of s.history) {
    if (h.told !== 'Committed') continue;
    const mine = records(s).filter(
      (r) => r.e.kind === 'Data' && r.e.clientTransaction === h.clientTransaction,
    );
    const aborted = mine.find((r) => endingMarker(r.part, r.e.offset)?.kind === 'Abort');
    const who = producerOf(h.clientTransaction);
    if (aborted !== undefined) {
      return {
        text: `The application of ${h.clientTransaction} was told its commit succeeded, but its record at ${where(aborted.part, aborted.e)} is ${endedBy(aborted.part, aborted.e)}.`,
        over: [who, 'TC', leaderOf(aborted.part.name)],
      };
    }
    for (let r = 0; r < h.recordsSent; r++) {
      if (!mine.some((x) => x.e.record === r)) {
        return {
          text: `The application of ${h.clientTransaction} was told its commit succeeded, but its record ${r} is in no partition log.`,
          over: [who, 'TC'],
        };
      }
    }
  }
  return undefined;
}

function zombieFencing(s: KafkaView): Explanation | undefined {
  for (const { part, e } of records(s)) {
    const h = s.history.find((x) => x.clientTransaction === e.clientTransaction)!;
    if (!h.fenced || endingMarker(part, e.offset)?.kind !== 'Commit') continue;
    return {
      text: `${e.clientTransaction} was fenced (a newer instance of its transactional.id got a new epoch before it was prepared), yet its record at ${where(part, e)} (epoch ${e.epoch}) is ${endedBy(part, e)}.`,
      over: [producerOf(e.clientTransaction), 'TC', leaderOf(part.name)],
    };
  }
  return undefined;
}

function idempotence(s: KafkaView): Explanation | undefined {
  for (const part of s.partitions) {
    const data = part.log.filter((e) => e.kind === 'Data');
    for (const e of data) {
      const twin = data.find(
        (x) => x.offset > e.offset && x.clientTransaction === e.clientTransaction && x.record === e.record,
      );
      if (twin === undefined) continue;
      return {
        text: `${part.name} holds record ${e.record} of ${e.clientTransaction} twice: offset ${e.offset} (seq ${e.sequence}, epoch ${e.epoch}) and offset ${twin.offset} (seq ${twin.sequence}, epoch ${twin.epoch}); a retry was appended again instead of being recognised as a duplicate.`,
        over: [producerOf(e.clientTransaction), leaderOf(part.name)],
      };
    }
    // A record of an idempotent producer that an earlier record of the same producer follows.
    const overtakes = (e: LogEntryView, x: LogEntryView) =>
      !e.transactional &&
      !x.transactional &&
      x.offset > e.offset &&
      x.clientTransaction === e.clientTransaction &&
      x.record < e.record;
    const later = data.find((e) => data.some((x) => overtakes(e, x)));
    if (later !== undefined) {
      const earlier = data.find((x) => overtakes(later, x))!;
      return {
        text: `${part.name} holds record ${later.record} of ${later.clientTransaction} (offset ${later.offset}, pid ${later.pid} epoch ${later.epoch} seq ${later.sequence}) before its earlier record ${earlier.record} (offset ${earlier.offset}, pid ${earlier.pid} epoch ${earlier.epoch} seq ${earlier.sequence}): the producer's records are out of order.`,
        over: [later.clientTransaction, leaderOf(part.name)],
      };
    }
  }
  return undefined;
}

function exactlyOnce(s: KafkaView): Explanation | undefined {
  const offsets = s.partitions.find((p) => p.name === '__consumer_offsets');
  if (offsets === undefined) return undefined;
  const committedCommit = [...offsets.log]
    .reverse()
    .find(
      (e) =>
        e.kind === 'OffsetCommit' && (!e.transactional || endingMarker(offsets, e.offset)?.kind === 'Commit'),
    );
  const committedUpTo = committedCommit?.value ?? 0;
  const outputs = records(s).filter((r) => r.part.name !== '__consumer_offsets');
  const byInput = new Map<number, typeof outputs>();
  for (const r of outputs) byInput.set(r.e.value, [...(byInput.get(r.e.value) ?? []), r]);
  for (const [input, rs] of byInput) {
    const committed = rs.filter((r) => endingMarker(r.part, r.e.offset)?.kind === 'Commit');
    if (committed.length > 1) {
      return {
        text: `Input record ${input} has ${committed.length} committed outputs: ${committed.map((r) => `${where(r.part, r.e)} (${r.e.clientTransaction})`).join(' and ')}.`,
        over: ['TC', 'GC'],
      };
    }
  }
  for (let input = 0; input < committedUpTo; input++) {
    const live = (byInput.get(input) ?? []).filter((r) => endingMarker(r.part, r.e.offset)?.kind !== 'Abort');
    if (live.length === 0) {
      const at =
        committedCommit === undefined
          ? ''
          : ` (offset commit at __consumer_offsets offset ${committedCommit.offset}, ${committedCommit.transactional ? 'transactional' : 'outside any transaction'})`;
      return {
        text: `The group's committed offset is ${committedUpTo}${at}, past input record ${input}, but no output of input ${input} is committed or pending: that input is lost.`,
        over: ['GC'],
      };
    }
  }
  for (const [input, rs] of byInput) {
    const committed = rs.find((r) => endingMarker(r.part, r.e.offset)?.kind === 'Commit');
    if (committed !== undefined && input >= committedUpTo) {
      return {
        text: `The output of input record ${input} at ${where(committed.part, committed.e)} is committed, but the group's offset is still ${committedUpTo}: the input will be processed again.`,
        over: ['GC', leaderOf(committed.part.name)],
      };
    }
  }
  return undefined;
}

function coordinatorTransitions(states: readonly KafkaView[]): Explanation | undefined {
  const s = states[states.length - 1]!;
  const previous = states[states.length - 2];
  for (const [i, r] of s.coordinator.transactionLog.entries()) {
    if (!r.written) continue;
    const stateId = Object.entries(txnStateName).find(([, n]) => n === r.state)?.[0];
    const allowed = (VALID_PREVIOUS[Number(stateId)] ?? []).map((x) => txnStateName[x] ?? 'none');
    if (!allowed.includes(r.previousState)) {
      return {
        text: `${r.transactionalId}'s __transaction_state record moved from ${r.previousState} to ${r.state}; Kafka's valid-previous-state table allows ${r.state} only after ${allowed.join(', ')}.`,
        over: ['TC'],
      };
    }
    const was = previous?.coordinator.transactionLog[i];
    if (was?.written === true && was.producerId === r.producerId && r.producerEpoch < was.producerEpoch) {
      return {
        text: `${r.transactionalId}'s producer id ${r.producerId} went from epoch ${was.producerEpoch} back to ${r.producerEpoch}.`,
        over: ['TC'],
      };
    }
  }
  return undefined;
}

const holdingGrant = [
  'READY',
  'IN_TRANSACTION',
  'COMMITTING_TRANSACTION',
  'ABORTING_TRANSACTION',
  'ABORTABLE_ERROR',
];

/** The transactional.id of a producer instance, from the instance's name. */
function transactionalIdOf(instance: string): string {
  const node = readNode(instance) as Extract<Node, { role: 'producer' }>;
  return transactionalIdName(node.transactionalId);
}

function producerIdAgreement(s: KafkaView): Explanation | undefined {
  for (const p of s.producers) {
    if (p.status !== 'Running' || !holdingGrant.includes(p.state)) continue;
    const id = transactionalIdOf(p.name);
    const t = s.coordinator.transactions.find((x) => x.transactionalId === id);
    const at =
      t?.known === true ? `producer id ${t.producerId} at epoch ${t.producerEpoch}` : 'no producer id';
    if (t?.known === true && t.producerId === p.pid && p.epoch <= t.producerEpoch) continue;
    return {
      text: `${p.name} is ${p.state} with producer id ${p.pid} at epoch ${p.epoch}, but the coordinator has ${at} for ${id}: the client holds a producer id or epoch the coordinator never granted.`,
      over: [p.name, 'TC'],
    };
  }
  return undefined;
}

function noSpuriousFatal(s: KafkaView, labels: readonly string[]): Explanation | undefined {
  const p = s.producers.find((x) => x.state === 'FATAL_ERROR');
  if (p === undefined) return undefined;
  const id = transactionalIdOf(p.name);
  return {
    text: `${p.name} (producer id ${p.pid}, epoch ${p.epoch}) went FATAL after "${labels[labels.length - 1] ?? ''}", yet no other instance of ${id} bumped its epoch and the coordinator neither timed out nor expired its transaction.`,
    over: [p.name, 'TC'],
  };
}

/** The error of the answer the last step delivered to `producer`, if it delivered one. */
function deliveredError(before: KafkaView, label: string, producer: string): string | undefined {
  const m = /^deliver (\S+)→(\S+): (.*)$/.exec(label);
  if (m === null || m[2] !== producer) return undefined;
  const channel = before.network.find(
    (c) => c.from === m[1] && c.to === producer && c.messages[0]?.api === m[3],
  );
  return (channel?.messages[0] as { error?: string } | undefined)?.error;
}

function timedOutProducerFenced(
  states: readonly KafkaView[],
  labels: readonly string[],
): Explanation | undefined {
  const last = states[states.length - 1]!;
  const before = states[states.length - 2];
  const p = last.producers.find((x) => x.state === 'FATAL_ERROR');
  if (p === undefined) return undefined;
  const label = labels[labels.length - 1] ?? '';
  const error = before === undefined ? undefined : deliveredError(before, label, p.name);
  const cause = error === undefined ? 'with no answer to blame' : `on ${error}`;
  return {
    text: `${p.name} (producer id ${p.pid}, epoch ${p.epoch}) went FATAL ${cause} after "${label}", and only the coordinator's timeout of its transaction excuses it: a timeout abort should reach the producer as PRODUCER_FENCED or INVALID_PRODUCER_EPOCH.`,
    over: [p.name, 'TC'],
  };
}

function coordinatorNotStuck(s: KafkaView): Explanation | undefined {
  for (const t of s.coordinator.transactions) {
    if (!t.known || !t.state.startsWith('Prepare') || t.pendingState !== 'none') continue;
    return {
      text: `${t.transactionalId} is ${t.state} (producer id ${t.producerId}, epoch ${t.producerEpoch}) but the coordinator no longer sends its markers: a leader answered one with a fencing error, and the transaction never completes.`,
      over: ['TC'],
    };
  }
  return undefined;
}

export function explain(
  property: string,
  views: readonly View[],
  labels: readonly string[],
): Explanation | undefined {
  const states = views.map(kafka);
  const last = states[states.length - 1]!;
  switch (property) {
    // A hanging transaction is also why an LSO never advances (the B1 lasso).
    case 'NoHangingTransaction':
    case 'LsoAdvances':
      return hanging(states, labels);
    case 'ReadCommittedIsolation':
      return readCommitted(states, labels);
    case 'AtomicCommit':
      return atomicCommit(last);
    case 'NoLostWrite':
      return noLostWrite(last);
    case 'ZombieFencing':
      return zombieFencing(last);
    case 'Idempotence':
      return idempotence(last);
    case 'ExactlyOnce':
      return exactlyOnce(last);
    case 'CoordinatorTransitions':
      return coordinatorTransitions(states);
    case 'ProducerIdAgreement':
      return producerIdAgreement(last);
    case 'NoSpuriousFatal':
      return noSpuriousFatal(last, labels);
    case 'CoordinatorNotStuck':
      return coordinatorNotStuck(last);
    case 'TimedOutProducerFenced':
      return timedOutProducerFenced(states, labels);
    default:
      return undefined;
  }
}
