// Each step of a Kafka trace in Kafka's terms: the RPC delivered or lost, or the call or fault
// taken, with what it changed in logs, coordinator and clients, and its events on the sequence
// diagram. Works from the structured step each label reads as (labels.ts).
import type { DiagramEvent, StepMeaning, View } from '../../../checker/report/renderer.ts';
import type { ChannelView, KafkaView, LogEntryView, MessageView } from '../view.ts';
import {
  type CallStep,
  type Step,
  type StepOfKind,
  dataPartitionName,
  isLabelError,
  nameOf,
  parseLabel,
  transactionalIdName,
} from '../labels.ts';
import { VERIFICATION_CONN } from '../partition.ts';
import { isMarker, kafka, leaderOf, txnText } from './views.ts';

const channelKey = (from: string, to: string, conn: number) => `${from}|${to}|${conn}`;

/** How a step names a connection other than the first. */
const connectionText = (conn: number) =>
  conn === 0 ? '' : conn === VERIFICATION_CONN ? ' (verification)' : ` (connection #${conn})`;

function messageText(m: MessageView): string {
  const pe = `pid ${m.pid}, epoch ${m.epoch}`;
  const parts = m.partitions.join(', ');
  if (m.error !== undefined) {
    const api = m.api.replace(/ response$/, '');
    const detail =
      api === 'InitProducerId'
        ? ` (${pe})`
        : api === 'Produce' || api === 'WriteTxnMarkers'
          ? ` (${parts})`
          : '';
    return `${m.api} ${m.error}${detail}`;
  }
  const decision = m.commit === true ? 'COMMIT' : 'ABORT';
  switch (m.api) {
    case 'InitProducerId':
      return m.pid < 0
        ? `InitProducerId(${m.transactionalId})`
        : `InitProducerId(${m.transactionalId}, ${pe})`;
    case 'AddPartitionsToTxn':
      return `AddPartitionsToTxn(${m.transactionalId}, ${pe}, [${parts}])`;
    case 'AddOffsetsToTxn':
      return `AddOffsetsToTxn(${m.transactionalId}, ${pe})`;
    case 'EndTxn':
      return `EndTxn(${decision}, ${pe})`;
    case 'Produce':
      return `Produce(${parts}, ${pe}, seq ${m.sequence}) of ${m.clientTransaction}`;
    case 'WriteTxnMarkers':
      return `WriteTxnMarkers(${decision}, ${parts}, ${pe}, coordinator epoch ${m.coordinatorEpoch})`;
    case 'TxnOffsetCommit':
      return `TxnOffsetCommit(offset ${m.value}, ${pe}, generation ${m.generation})`;
    default:
      return `${m.api}(${pe})`;
  }
}

function entryText(e: LogEntryView): string {
  switch (e.kind) {
    case 'Commit':
      return `COMMIT marker pid ${e.pid} epoch ${e.epoch}`;
    case 'Abort':
      return `ABORT marker pid ${e.pid} epoch ${e.epoch}`;
    case 'OffsetCommit':
      return `offset commit ${e.value} pid ${e.pid} epoch ${e.epoch} (${e.clientTransaction})`;
    default:
      return `${e.transactional ? '' : 'non-transactional '}data pid ${e.pid} epoch ${e.epoch} seq ${e.sequence} (${e.clientTransaction} record ${e.record})`;
  }
}

/** Lines saying what changed between two states, in Kafka's terms. */
function changes(before: KafkaView, after: KafkaView): string[] {
  const out: string[] = [];
  after.producers.forEach((p, i) => {
    const q = before.producers[i]!;
    if (q.status !== p.status) out.push(`${p.name}: ${q.status} → ${p.status}`);
    if (q.state !== p.state) out.push(`${p.name}: ${q.state} → ${p.state}`);
    if (q.pid !== p.pid || q.epoch !== p.epoch) out.push(`${p.name}: now pid ${p.pid}, epoch ${p.epoch}`);
    if (!q.epochBumpRequired && p.epochBumpRequired)
      out.push(`${p.name}: must bump its epoch before the next transaction (KIP-360)`);
    const added = (v: typeof p) => v.partitionsInTransaction.join(', ');
    if (added(q) !== added(p))
      out.push(`${p.name}: partitions in the transaction [${added(q)}] → [${added(p)}]`);
    const batches = (v: typeof p) =>
      v.batches
        .map((b) => `${b.partition}${b.sequence < 0 ? '' : ` seq ${b.sequence}`} ${b.status}`)
        .join(', ');
    if (batches(q) !== batches(p)) out.push(`${p.name}: batches [${batches(q)}] → [${batches(p)}]`);
  });
  const tc = after.coordinator;
  if (before.coordinator.coordinatorEpoch !== tc.coordinatorEpoch)
    out.push(`TC: coordinator epoch ${before.coordinator.coordinatorEpoch} → ${tc.coordinatorEpoch}`);
  tc.transactions.forEach((t, i) => {
    const was = before.coordinator.transactions[i]!;
    if (JSON.stringify(was) !== JSON.stringify(t))
      out.push(`TC ${t.transactionalId}: ${txnText(was)} → ${txnText(t)}`);
  });
  tc.transactionLog.forEach((r, i) => {
    if (before.coordinator.transactionLog[i]!.written && !r.written)
      out.push(`__transaction_state: ${r.transactionalId} tombstone`);
    if (JSON.stringify(before.coordinator.transactionLog[i]) === JSON.stringify(r) || !r.written) return;
    out.push(
      `__transaction_state: ${r.transactionalId} = ${r.state} pid ${r.producerId} epoch ${r.producerEpoch} [${r.partitions.join(', ')}]`,
    );
  });
  after.partitions.forEach((part, i) => {
    const was = before.partitions[i]!;
    for (const e of part.log.slice(was.log.length))
      out.push(`${part.name} offset ${e.offset}: ${entryText(e)}`);
    for (const e of was.producers)
      if (!part.producers.some((q) => q.pid === e.pid))
        out.push(`${part.name}: producer state of pid ${e.pid} dropped`);
    if (was.highWatermark !== part.highWatermark || was.lastStableOffset !== part.lastStableOffset) {
      out.push(
        `${part.name}: HW ${was.highWatermark} → ${part.highWatermark}, LSO ${was.lastStableOffset} → ${part.lastStableOffset}`,
      );
    }
  });
  after.consumers.forEach((c, i) => {
    for (const d of c.delivered.slice(before.consumers[i]!.delivered.length)) {
      out.push(
        `${c.name} delivers ${d.partition} offset ${d.offset} (${d.clientTransaction} record ${d.record})`,
      );
    }
  });
  after.history.forEach((h, i) => {
    const was = before.history[i]!;
    if (was.decision !== h.decision)
      out.push(`${h.clientTransaction}: the application decides to ${h.decision.toLowerCase()}`);
    if (was.told !== h.told)
      out.push(`${h.clientTransaction}: the application is told ${h.told.toLowerCase()}`);
    if (!was.prepared && h.prepared) out.push(`${h.clientTransaction}: PrepareCommit written`);
    if (!was.fenced && h.fenced) out.push(`${h.clientTransaction}: fenced by a newer instance`);
    if (!was.expired && h.expired === true)
      out.push(`${h.clientTransaction}: its producer id expired at the coordinator`);
  });
  if (
    before.group !== undefined &&
    after.group !== undefined &&
    before.group.generation !== after.group.generation
  ) {
    out.push(`group: generation ${before.group.generation} → ${after.group.generation}`);
  }
  return out;
}

/** What a delivered message did at its receiver, in a few words. */
function effect(before: KafkaView, after: KafkaView, receiver: string): string | undefined {
  const out: string[] = [];
  if (receiver === 'TC') {
    after.coordinator.transactions.forEach((t, i) => {
      const was = before.coordinator.transactions[i]!;
      if (!t.known) return;
      if (!was.known || was.state !== t.state)
        out.push(`${t.transactionalId} ${was.known ? was.state : 'new'} → ${t.state}`);
      else if (was.partitions.join() !== t.partitions.join())
        out.push(
          `${t.transactionalId} partitions [${was.partitions.join(', ')}] → [${t.partitions.join(', ')}]`,
        );
    });
  }
  after.partitions.forEach((part, i) => {
    if (leaderOf(part.name) !== receiver) return;
    const was = before.partitions[i]!;
    for (const e of part.log.slice(was.log.length))
      out.push(
        `offset ${e.offset}: ${isMarker(e) ? `${e.kind.toUpperCase()} marker` : e.kind === 'Data' ? 'data' : 'offset commit'}`,
      );
    if (part.log.length > was.log.length) out.push(`HW ${part.highWatermark}, LSO ${part.lastStableOffset}`);
  });
  after.producers.forEach((p, i) => {
    const was = before.producers[i]!;
    if (p.name === receiver && was.state !== p.state) out.push(`${was.state} → ${p.state}`);
  });
  return out.length === 0 ? undefined : out.join(', ');
}

/** Follows every message from the step that sent it to the step that delivers or loses it. */
class MessageClock {
  private readonly sentAt = new Map<string, number[]>();

  /** The step that sent the head of a channel, taken off the channel. */
  take(key: string): number | undefined {
    return this.sentAt.get(key)?.shift();
  }

  /** Records the messages `after` holds beyond those already known; returns them. */
  record(after: readonly ChannelView[], step: number): { channel: ChannelView; message: MessageView }[] {
    const sent: { channel: ChannelView; message: MessageView }[] = [];
    const live = new Set<string>();
    for (const ch of after) {
      const key = channelKey(ch.from, ch.to, ch.connection);
      live.add(key);
      const known = (this.sentAt.get(key) ?? []).slice(-ch.messages.length);
      for (const message of ch.messages.slice(known.length)) {
        sent.push({ channel: ch, message });
        known.push(step);
      }
      this.sentAt.set(key, known);
    }
    for (const key of this.sentAt.keys()) if (!live.has(key)) this.sentAt.delete(key);
    return sent;
  }
}

const note = (over: string, text: string, fault = false): DiagramEvent => ({
  kind: 'note',
  over,
  text,
  fault,
});

/** What a call or a fault did, for the list of steps and the diagram. */
interface Sentence {
  readonly action: string;
  readonly events: DiagramEvent[];
  /** The action already names what the actor sent, so the changes leave it out. */
  readonly namesItsSends?: boolean;
}

/** Around a call: the states before and after, and what its actor sent in it. */
interface Moment {
  readonly before: KafkaView;
  readonly after: KafkaView;
  readonly sent: readonly string[];
}

/** A step noted over the one who took it. */
const said = (by: string, action: string): Sentence => ({ action, events: [note(by, action)] });
/** A fault, a timeout or an expiry, marked as one on the diagram. */
const fault = (by: string, action: string): Sentence => ({
  action,
  events: [note(by, `⚠ ${action}`, true)],
});

/** A call of the producer's API by the application. */
const applicationCalls = (by: string, call: string, partition?: number): Sentence =>
  said(
    by,
    `application calls ${call}(${partition === undefined ? '' : `record → ${dataPartitionName(partition)}`})`,
  );

/** A client sends what it has ready: the request its state calls for, or a partition's Produce. */
const sends = (by: string, sent: readonly string[]): Sentence => ({
  ...said(by, sent.length === 0 ? 'sends nothing' : `sends ${sent.join('; ')}`),
  namesItsSends: true,
});

const produceTimedOut = (by: string, partition: number): Sentence =>
  fault(
    by,
    `Produce to ${dataPartitionName(partition)} timed out: sent again on a new connection; the first copy may still arrive`,
  );

function batchExpired(by: string, partition: number, after: KafkaView): Sentence {
  const name = dataPartitionName(partition);
  const stillInFlight = after.network.some(
    (ch) => ch.from === by && ch.to === leaderOf(name) && ch.messages.some((m) => m.api === 'Produce'),
  );
  const idempotent = after.idempotentProducers?.find((q) => q.name === by);
  const renewed =
    idempotent === undefined
      ? ''
      : idempotent.pid < 0
        ? 'the client resets its producer id'
        : `the client is at pid ${idempotent.pid} epoch ${idempotent.epoch}`;
  const consequence =
    idempotent === undefined ? 'the transaction must abort' : `the record fails; ${renewed}`;
  return fault(
    by,
    `batch for ${name} expired (delivery.timeout.ms): ${consequence}${stillInFlight ? '; the Produce already sent is still in flight' : ''}`,
  );
}

/** What the coordinator holds for a transactional.id after the step. */
const transaction = (after: KafkaView, t: number) =>
  after.coordinator.transactions.find((x) => x.transactionalId === transactionalIdName(t));

/** A consumer fetches from a partition's leader and gets what its isolation level lets it read. */
function consumerFetch(name: string, partition: string, before: KafkaView, after: KafkaView): Sentence {
  const i = after.consumers.findIndex((c) => c.name === name);
  const c = after.consumers[i]!;
  const q = after.partitions.findIndex((p) => p.name === partition);
  const from = before.consumers[i]!.position[q]!;
  const to = c.position[q]!;
  const got = c.delivered.slice(before.consumers[i]!.delivered.length).map((d) => d.offset);
  const upTo =
    c.isolation === 'read_committed'
      ? `LSO ${before.partitions[q]!.lastStableOffset}`
      : `HW ${before.partitions[q]!.highWatermark}`;
  const answer =
    got.length > 0
      ? `records at offsets ${got.join(', ')} (read up to ${upTo})`
      : `no record (position ${from} → ${to}, ${upTo})`;
  const leader = leaderOf(partition);
  return {
    action: `${name} → ${leader}  Fetch(${partition}, ${c.isolation}, from offset ${from}): ${answer}`,
    events: [
      {
        kind: 'message',
        from: name,
        to: leader,
        text: `Fetch(${partition}, ${c.isolation}, from ${from})`,
        response: false,
      },
      { kind: 'message', from: leader, to: name, text: answer, response: true },
    ],
  };
}

type CallKind = CallStep['kind'];

/** The sentence of every call and fault, from its step; `by` names who took it. */
const sentences: {
  readonly [K in CallKind]: (step: StepOfKind<K>, by: string, at: Moment) => Sentence;
} = {
  initTransactions: (_, by) => applicationCalls(by, 'initTransactions'),
  fetchOffsets: (_, by, { after }) => {
    const p = after.producers.find((q) => q.name === by);
    return said(
      by,
      `reads the group's committed offset (OffsetFetch): starts at input offset ${p?.inputPosition ?? '?'}`,
    );
  },
  beginTransaction: (_, by) => applicationCalls(by, 'beginTransaction'),
  send: (step, by) => applicationCalls(by, 'send', step.partition),
  sendOffsetsToTransaction: (_, by) => applicationCalls(by, 'sendOffsetsToTransaction'),
  commitTransaction: (_, by) => applicationCalls(by, 'commitTransaction'),
  abortTransaction: (_, by) => applicationCalls(by, 'abortTransaction'),
  sendTxnRequest: (_, by, { sent }) => sends(by, sent),
  sendProduce: (_, by, { sent }) => sends(by, sent),
  // A client rule set may give up instead of sending again (franz-go's EndTxn).
  requestTimeout: (step, by, { after }) =>
    fault(
      by,
      after.producers.find((p) => p.name === by)?.inFlightRequest === step.api
        ? `${step.api} request timed out: reconnects and sends it again; the first copy may still arrive`
        : `${step.api} request timed out: the client gives up, the application is told it failed; the first copy may still arrive`,
    ),
  produceTimeout: (step, by) => produceTimedOut(by, step.partition),
  batchExpired: (step, by, { after }) => batchExpired(by, step.partition, after),
  crash: (_, by) => fault(by, 'crashes'),
  transactionTimeout: (step, by) =>
    fault(by, `transaction timeout: the coordinator aborts ${transactionalIdName(step.transactionalId)}`),
  coordinatorFailover: (step, by, { after }) => {
    const inFlight = step.appends
      .map((x) => `${transactionalIdName(x.transactionalId)} ${x.kept ? 'kept' : 'lost'}`)
      .join(', ');
    const appends = inFlight === '' ? '' : `; appends in flight: ${inFlight} (answered NOT_COORDINATOR)`;
    const loaded =
      after.coordinator.loading === true
        ? 'loading __transaction_state'
        : 'state reloaded from __transaction_state';
    return fault(
      by,
      `failover: memory lost, ${loaded}, coordinator epoch ${after.coordinator.coordinatorEpoch}${appends}`,
    );
  },
  resendTxnMarker: (step, by) =>
    said(
      by,
      `re-sends the marker of ${transactionalIdName(step.transactionalId)} to ${dataPartitionName(step.partition)}`,
    ),
  completeTransaction: (step, by, { after }) => {
    const t = transaction(after, step.transactionalId);
    return said(
      by,
      `every marker acknowledged: writes ${t?.known === true ? t.state : 'Complete*'} for ${transactionalIdName(step.transactionalId)}`,
    );
  },
  fetch: (step, by, { before, after }) => consumerFetch(by, dataPartitionName(step.partition), before, after),
  // A leader gives up a verification whose request or answer was lost (AddPartitionsToTxnManager).
  verificationTimeout: (step, by, { sent }) => ({
    ...fault(
      by,
      `verification with the coordinator timed out (attempt ${step.attempt}, seq ${step.sequence})${sent.length === 0 ? '' : `; sends ${sent.join('; ')}`}`,
    ),
    namesItsSends: true,
  }),
  completeAppend: (step, by, { after }) => {
    const t = transaction(after, step.transactionalId);
    return said(
      by,
      `__transaction_state append for ${transactionalIdName(step.transactionalId)} written: ${t?.known === true ? t.state : 'the transition'} installed`,
    );
  },
  failAppend: (step, by) =>
    fault(
      by,
      `__transaction_state append for ${transactionalIdName(step.transactionalId)} failed (NOT_ENOUGH_REPLICAS): pending transition dropped, answered COORDINATOR_NOT_AVAILABLE`,
    ),
  markerTimeout: (step, by) =>
    fault(
      by,
      `WriteTxnMarkers to ${nameOf(step.leader)} timed out: new connection, markers re-enqueued; the first request may still arrive`,
    ),
  transactionalIdExpiry: (step, by) =>
    fault(
      by,
      `${transactionalIdName(step.transactionalId)} expired (transactional.id.expiration.ms): tombstone written, metadata removed`,
    ),
  // A leader drops the state of an idle producer id.
  producerStateExpiry: (step, by) =>
    fault(by, `producer state of pid ${step.producerId} expired (producer.id.expiration.ms)`),
  loadTransactions: (_, by, { after }) =>
    said(
      by,
      `finished loading __transaction_state: ${after.coordinator.transactions.filter((t) => t.known).length} transactional.id(s) in memory, markers re-sent for Prepare*`,
    ),
  finalizeTransactionVersion: (step, by) =>
    fault(
      by,
      `transaction.version finalized at ${step.version} (kafka-features): a 4.x client reads it when it ends a transaction (KAFKA-18227) and bumps its epoch on an upgrade`,
    ),
  idempotentInitProducerId: (_, by, { after }) => {
    const p = after.idempotentProducers?.find((q) => q.name === by);
    return said(
      by,
      `InitProducerId without transactional.id: producer id ${p?.pid ?? '?'}, epoch ${p?.epoch ?? '?'}`,
    );
  },
  idempotentSend: (step, by) => applicationCalls(by, 'send', step.partition),
  idempotentSendProduce: (_, by, { sent }) => sends(by, sent),
  idempotentProduceTimeout: (step, by) => produceTimedOut(by, step.partition),
  idempotentBatchExpired: (step, by, { after }) => batchExpired(by, step.partition, after),
};

/** The step a label says; the labels of a trace that replayed are the model's own. */
function readStep(label: string): Step {
  const step = parseLabel(label);
  if (isLabelError(step)) throw new Error(step.error);
  return step;
}

/** A message delivered or lost, as the head of its channel before the step. */
function channelMeaning(
  step: StepOfKind<'deliver' | 'lose'>,
  head: { message: MessageView; sentAt: number | undefined },
  number: number,
  changed: string[],
  before: KafkaView,
  after: KafkaView,
): StepMeaning {
  const [from, to] = [nameOf(step.from), nameOf(step.to)];
  const text = messageText(head.message);
  const late = head.sentAt !== undefined && head.sentAt < number - 1 ? `, sent at step ${head.sentAt}` : '';
  const via = connectionText(step.connection);
  if (step.kind === 'lose') {
    return {
      actor: 'network',
      action: `lost: ${from} → ${to}  ${text}${via}${late}`,
      changes: changed,
      events: [{ kind: 'lost', from, to, text }],
    };
  }
  const did = effect(before, after, to);
  const event: DiagramEvent = {
    kind: 'message',
    from,
    to,
    text: step.connection === VERIFICATION_CONN ? `${text} (verification)` : text,
    response: head.message.error !== undefined,
    ...(head.sentAt === undefined ? {} : { sentAt: head.sentAt }),
    ...(did === undefined ? {} : { effect: did }),
  };
  return {
    actor: to,
    action: `${from} → ${to}  ${text}${via}${late}`,
    changes: changed.length === 0 ? [`${to} ignores it (no effect)`] : changed,
    events: [event],
  };
}

export function steps(states: readonly View[], labels: readonly string[]): StepMeaning[] {
  const clock = new MessageClock();
  clock.record(kafka(states[0]!).network, 0);
  return labels.map((label, i) => {
    const before = kafka(states[i]!);
    const after = kafka(states[i + 1]!);
    const number = i + 1;
    const step = readStep(label);
    // The head a delivery or loss takes was sent before this step: read it off the clock first.
    let head: { message: MessageView; sentAt: number | undefined } | undefined;
    if (step.kind === 'deliver' || step.kind === 'lose') {
      const [from, to] = [nameOf(step.from), nameOf(step.to)];
      const channel = before.network.find(
        (c) => c.from === from && c.to === to && c.connection === step.connection,
      );
      head = { message: channel!.messages[0]!, sentAt: clock.take(channelKey(from, to, step.connection)) };
    }
    const sentNow = clock.record(after.network, number).map(({ channel, message }) => {
      const on =
        channel.connection === VERIFICATION_CONN
          ? ' (verification)'
          : channel.connection === 0
            ? ''
            : ` on connection #${channel.connection}`;
      return { by: channel.from, text: `${messageText(message)} → ${channel.to}${on}` };
    });
    const changed = [...changes(before, after), ...sentNow.map((s) => `${s.by} sends ${s.text}`)];
    if (step.kind === 'deliver' || step.kind === 'lose')
      return channelMeaning(step, head!, number, changed, before, after);

    const by = nameOf(step.actor);
    const sent = sentNow.filter((s) => s.by === by).map((s) => s.text);
    const say = sentences[step.kind] as (step: CallStep, by: string, at: Moment) => Sentence;
    const sentence = say(step, by, { before, after, sent });
    return {
      actor: by,
      action: sentence.action,
      changes: sentence.namesItsSends ? changed.filter((c) => !c.startsWith(`${by} sends `)) : changed,
      events: sentence.events,
    };
  });
}

export function participants(states: readonly View[]): string[] {
  const s = kafka(states[0]!);
  return [
    ...s.producers.map((p) => p.name),
    ...(s.idempotentProducers ?? []).map((p) => p.name),
    'TC',
    ...s.partitions.map((p) => leaderOf(p.name)),
    ...s.consumers.map((c) => c.name),
  ];
}
