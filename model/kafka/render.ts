// Kafka traces in Kafka's terms: each step as the RPC or call it is, what it changed in logs,
// coordinator and clients, the partition logs with HW and LSO, and why a property broke. Reads
// only the trace's states (the model's view), never the model's internals.
import type {
  DiagramEvent,
  Explanation,
  StepMeaning,
  Table,
  TraceRenderer,
  View,
} from '../../checker/report/renderer.ts';
import type {
  ChannelView,
  KafkaView,
  LogEntryView,
  MessageView,
  PartitionView,
  TransactionView,
} from './view.ts';
import { txnStateName } from './state.ts';
import { VALID_PREVIOUS } from './properties.ts';
import { VERIFICATION_CONN } from './partition.ts';

// The channel is `from→to`, then `#n` for a connection after the first, or ` (verification)`.
const DELIVERY = /^(deliver|lose) (\S+)→([^#: ]+)(?:#(\d+)| (\(verification\)))?: (.+)$/;
const CALL = /^(\S+): (\w+)(?:\((.*)\))?$/;

const kafka = (v: View) => v as unknown as KafkaView;
const channelKey = (from: string, to: string, conn: number) => `${from}|${to}|${conn}`;
/** How a label and a step name a connection other than the first. */
const connectionText = (conn: number) =>
  conn === 0 ? '' : conn === VERIFICATION_CONN ? ' (verification)' : ` (connection #${conn})`;

/** The leader of a partition: L<n>, or GC for the group's __consumer_offsets. */
function leaderOf(partition: string): string {
  return partition === '__consumer_offsets' ? 'GC' : `L${partition.slice(1)}`;
}

export function messageText(m: MessageView): string {
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

const isMarker = (e: LogEntryView) => e.kind === 'Commit' || e.kind === 'Abort';

/** The marker that ended the transaction of the record at `offset`, if any (as the leader decides it). */
function endingMarker(part: PartitionView, offset: number): LogEntryView | undefined {
  const pid = part.log[offset]!.pid;
  return part.log.slice(offset + 1).find((e) => isMarker(e) && e.pid === pid);
}

function outcomeText(part: PartitionView, e: LogEntryView): string {
  if (isMarker(e) || !e.transactional) return '';
  const marker = endingMarker(part, e.offset);
  if (marker === undefined) return 'open';
  return `${marker.kind === 'Commit' ? 'committed' : 'aborted'} by ${marker.offset}`;
}

function txnText(t: TransactionView): string {
  if (!t.known) return 'unknown';
  const pending = t.pendingState === 'none' ? '' : ` (pending ${t.pendingState})`;
  return `${t.state}${pending} pid ${t.producerId} epoch ${t.producerEpoch} [${t.partitions.join(', ')}]`;
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

function producerCall(
  name: string,
  call: string,
  arg: string | undefined,
  after: KafkaView,
  sent: string[],
): { action: string; events: DiagramEvent[] } {
  switch (call) {
    case 'sendTxnRequest':
    case 'sendProduce': {
      const action = sent.length === 0 ? 'sends nothing' : `sends ${sent.join('; ')}`;
      return { action, events: [note(name, action)] };
    }
    case 'requestTimeout': {
      const action = `${arg} request timed out: reconnects and sends it again; the first copy may still arrive`;
      return { action, events: [note(name, `⚠ ${action}`, true)] };
    }
    case 'produceTimeout': {
      const action = `Produce to ${arg} timed out: sent again on a new connection; the first copy may still arrive`;
      return { action, events: [note(name, `⚠ ${action}`, true)] };
    }
    case 'batchExpired': {
      const stillInFlight = after.network.some(
        (ch) => ch.from === name && ch.to === leaderOf(arg!) && ch.messages.some((m) => m.api === 'Produce'),
      );
      const idempotent = after.idempotentProducers?.find((q) => q.name === name);
      const renewed =
        idempotent === undefined
          ? ''
          : idempotent.pid < 0
            ? 'the client resets its producer id'
            : `the client is at pid ${idempotent.pid} epoch ${idempotent.epoch}`;
      const consequence =
        idempotent === undefined ? 'the transaction must abort' : `the record fails; ${renewed}`;
      const action = `batch for ${arg} expired (delivery.timeout.ms): ${consequence}${stillInFlight ? '; the Produce already sent is still in flight' : ''}`;
      return { action, events: [note(name, `⚠ ${action}`, true)] };
    }
    case 'initProducerId': {
      const p = after.idempotentProducers?.find((q) => q.name === name);
      const action = `InitProducerId without transactional.id: producer id ${p?.pid ?? '?'}, epoch ${p?.epoch ?? '?'}`;
      return { action, events: [note(name, action)] };
    }
    case 'crash':
      return { action: 'crashes', events: [note(name, '⚠ crashes', true)] };
    case 'fetchOffsets': {
      const p = after.producers.find((q) => q.name === name);
      const action = `reads the group's committed offset (OffsetFetch): starts at input offset ${p?.inputPosition ?? '?'}`;
      return { action, events: [note(name, action)] };
    }
    default: {
      const action = `application calls ${call}(${arg === undefined ? '' : `record → ${arg}`})`;
      return { action, events: [note(name, action)] };
    }
  }
}

function coordinatorCall(
  call: string,
  arg: string | undefined,
  after: KafkaView,
): { action: string; events: DiagramEvent[] } {
  const txn = (id: string | undefined) =>
    after.coordinator.transactions.find((t) => t.transactionalId === id?.split(',')[0]);
  switch (call) {
    case 'transactionTimeout': {
      const action = `transaction timeout: the coordinator aborts ${arg}`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    case 'coordinatorFailover': {
      const appends = arg === undefined ? '' : `; appends in flight: ${arg} (answered NOT_COORDINATOR)`;
      const loaded =
        after.coordinator.loading === true
          ? 'loading __transaction_state'
          : 'state reloaded from __transaction_state';
      const action = `failover: memory lost, ${loaded}, coordinator epoch ${after.coordinator.coordinatorEpoch}${appends}`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    case 'finalizeTransactionVersion': {
      const action = `transaction.version finalized at ${arg} (kafka-features): clients take it at their next beginTransaction`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    case 'loadTransactions': {
      const action = `finished loading __transaction_state: ${after.coordinator.transactions.filter((t) => t.known).length} transactional.id(s) in memory, markers re-sent for Prepare*`;
      return { action, events: [note('TC', action)] };
    }
    case 'resendTxnMarker': {
      const [id, partition] = (arg ?? '').split(', ');
      const action = `re-sends the marker of ${id} to ${partition}`;
      return { action, events: [note('TC', action)] };
    }
    case 'completeTransaction': {
      const t = txn(arg);
      const action = `every marker acknowledged: writes ${t?.known === true ? t.state : 'Complete*'} for ${arg}`;
      return { action, events: [note('TC', action)] };
    }
    case 'completeAppend': {
      const t = txn(arg);
      const action = `__transaction_state append for ${arg} written: ${t?.known === true ? t.state : 'the transition'} installed`;
      return { action, events: [note('TC', action)] };
    }
    case 'failAppend': {
      const action = `__transaction_state append for ${arg} failed (NOT_ENOUGH_REPLICAS): pending transition dropped, answered COORDINATOR_NOT_AVAILABLE`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    case 'transactionalIdExpiry': {
      const action = `${arg} expired (transactional.id.expiration.ms): tombstone written, metadata removed`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    case 'markerTimeout': {
      const action = `WriteTxnMarkers to ${arg} timed out: new connection, markers re-enqueued; the first request may still arrive`;
      return { action, events: [note('TC', `⚠ ${action}`, true)] };
    }
    default:
      return { action: call, events: [note('TC', call)] };
  }
}

/**
 * A leader gives up a verification whose request or answer was lost (AddPartitionsToTxnManager), or
 * drops the state of an idle producer id (producer.id.expiration.ms).
 */
function leaderCall(
  leader: string,
  call: string,
  arg: string | undefined,
  sent: string[],
): { action: string; events: DiagramEvent[] } {
  const answer = sent.length === 0 ? '' : `; sends ${sent.join('; ')}`;
  let action: string;
  if (call === 'verificationTimeout')
    action = `verification with the coordinator timed out (${arg})${answer}`;
  else if (call === 'producerStateExpiry')
    action = `producer state of ${arg} expired (producer.id.expiration.ms)`;
  else return { action: call, events: [note(leader, call)] };
  return { action, events: [note(leader, `⚠ ${action}`, true)] };
}

function consumerFetch(
  name: string,
  partition: string,
  before: KafkaView,
  after: KafkaView,
): { action: string; events: DiagramEvent[] } {
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

function steps(states: readonly View[], labels: readonly string[]): StepMeaning[] {
  const clock = new MessageClock();
  clock.record(kafka(states[0]!).network, 0);
  return labels.map((label, i) => {
    const before = kafka(states[i]!);
    const after = kafka(states[i + 1]!);
    const step = i + 1;
    const delivery = DELIVERY.exec(label);
    let head: { message: MessageView; sentAt: number | undefined } | undefined;
    const conn =
      delivery === null ? 0 : delivery[5] !== undefined ? VERIFICATION_CONN : Number(delivery[4] ?? 0);
    if (delivery !== null) {
      const [, , from, to] = delivery;
      const channel = before.network.find((c) => c.from === from && c.to === to && c.connection === conn);
      head = { message: channel!.messages[0]!, sentAt: clock.take(channelKey(from!, to!, conn)) };
    }
    const sentNow = clock.record(after.network, step).map(({ channel, message }) => {
      const on =
        channel.connection === VERIFICATION_CONN
          ? ' (verification)'
          : channel.connection === 0
            ? ''
            : ` on connection #${channel.connection}`;
      return { by: channel.from, text: `${messageText(message)} → ${channel.to}${on}` };
    });
    const changed = [...changes(before, after), ...sentNow.map((s) => `${s.by} sends ${s.text}`)];

    if (delivery !== null && head !== undefined) {
      const [, verb, from, to] = delivery;
      const text = messageText(head.message);
      const late = head.sentAt !== undefined && head.sentAt < step - 1 ? `, sent at step ${head.sentAt}` : '';
      const via = connectionText(conn);
      if (verb === 'lose') {
        return {
          actor: 'network',
          action: `lost: ${from} → ${to}  ${text}${via}${late}`,
          changes: changed,
          events: [{ kind: 'lost', from: from!, to: to!, text }],
        };
      }
      const ignored = changed.length === 0 ? [`${to} ignores it (no effect)`] : changed;
      const did = effect(before, after, to!);
      const event: DiagramEvent = {
        kind: 'message',
        from: from!,
        to: to!,
        text: conn === VERIFICATION_CONN ? `${text} (verification)` : text,
        response: head.message.error !== undefined,
        ...(head.sentAt === undefined ? {} : { sentAt: head.sentAt }),
        ...(did === undefined ? {} : { effect: did }),
      };
      return {
        actor: to!,
        action: `${from} → ${to}  ${text}${via}${late}`,
        changes: ignored,
        events: [event],
      };
    }
    const call = CALL.exec(label);
    const [, who, name, arg] = call ?? [undefined, '', label, undefined];
    const sentByActor = sentNow.filter((s) => s.by === who).map((s) => s.text);
    const meaning =
      who === 'TC'
        ? coordinatorCall(name!, arg, after)
        : who!.startsWith('C') && name === 'fetch'
          ? consumerFetch(who!, arg!, before, after)
          : /^(L\d+|GC)$/.test(who!)
            ? leaderCall(who!, name!, arg, sentByActor)
            : producerCall(who!, name!, arg, after, sentByActor);
    // A client's send step already names what it sent.
    const sending = name === 'sendTxnRequest' || name === 'sendProduce' || name === 'verificationTimeout';
    return {
      actor: who!,
      action: meaning.action,
      changes: sending ? changed.filter((c) => !c.startsWith(`${who} sends `)) : changed,
      events: meaning.events,
    };
  });
}

function participants(states: readonly View[]): string[] {
  const s = kafka(states[0]!);
  return [
    ...s.producers.map((p) => p.name),
    ...(s.idempotentProducers ?? []).map((p) => p.name),
    'TC',
    ...s.partitions.map((p) => leaderOf(p.name)),
    ...s.consumers.map((c) => c.name),
  ];
}

function partitionTable(part: PartitionView): Table {
  const open = part.producers
    .filter((e) => e.currentTxnFirstOffset >= 0)
    .map((e) => `pid ${e.pid} open from offset ${e.currentTxnFirstOffset}`);
  const { highWatermark: hw, lastStableOffset: lso } = part;
  const rows = part.log.map((e) => ({
    cells: [
      String(e.offset),
      e.kind === 'Data'
        ? e.transactional
          ? 'data'
          : 'data (non-transactional)'
        : isMarker(e)
          ? `${e.kind.toUpperCase()} marker`
          : `offset commit ${e.value}`,
      String(e.pid),
      String(e.epoch),
      isMarker(e) ? '' : String(e.sequence),
      outcomeText(part, e),
      isMarker(e) ? '' : `${e.clientTransaction} r${e.record}`,
    ],
    marks: e.offset === lso && lso < hw ? ['LSO'] : [],
  }));
  rows.push({
    cells: [String(hw), '(log end)', '', '', '', '', ''],
    marks: lso === hw ? ['HW', 'LSO'] : ['HW'],
  });
  return {
    id: `log:${part.name}`,
    title: `${part.name} log at ${leaderOf(part.name)}: HW ${hw}, LSO ${lso}${open.length > 0 ? `; ${open.join(', ')}` : ''}`,
    columns: ['offset', 'batch', 'pid', 'epoch', 'seq', 'transaction', 'client txn'],
    rows,
    focus: true,
  };
}

function tables(state: View): Table[] {
  const s = kafka(state);
  const tc = s.coordinator;
  return [
    ...s.partitions.map(partitionTable),
    {
      id: 'tc',
      title: `TC transactions (coordinator epoch ${tc.coordinatorEpoch}) and __transaction_state`,
      columns: ['transactional.id', 'in memory', 'last log record', 'client txn'],
      rows: tc.transactions.map((t, i) => {
        const r = tc.transactionLog[i]!;
        const logged = r.written
          ? `${r.state} pid ${r.producerId} epoch ${r.producerEpoch} [${r.partitions.join(', ')}]`
          : 'none';
        return {
          cells: [t.transactionalId, txnText(t), logged, t.known ? t.clientTransaction : ''],
          marks: [],
        };
      }),
      focus: false,
    },
    {
      id: 'producers',
      title: 'Producer instances',
      columns: ['instance', 'status', 'client state', 'pid', 'epoch', 'in flight', 'batches'],
      rows: s.producers.map((p) => ({
        cells: [
          p.name,
          p.status,
          p.state,
          String(p.pid),
          String(p.epoch),
          p.inFlightRequest,
          p.batches.map((b) => `${b.partition} seq ${b.sequence} ${b.status}`).join(', '),
        ],
        marks: [],
      })),
      focus: false,
    },
    ...(s.idempotentProducers === undefined
      ? []
      : [
          {
            id: 'idempotent',
            title: 'Idempotent producers (no transactional.id)',
            columns: ['producer', 'pid', 'epoch', 'sequences', 'batches'],
            rows: s.idempotentProducers.map((p) => ({
              cells: [
                p.name,
                String(p.pid),
                p.fatal ? `${p.epoch} (FATAL)` : String(p.epoch),
                p.sequences
                  .map(
                    (q) =>
                      `${q.partition}: next ${q.nextSequence}, acked ${q.lastAckedSequence} (epoch ${q.epoch})`,
                  )
                  .join('; '),
                p.batches
                  .map(
                    (b) =>
                      `record ${b.record} → ${b.partition} ${b.status}${b.sequence < 0 ? '' : ` seq ${b.sequence} epoch ${b.epoch}`}`,
                  )
                  .join(', '),
              ],
              marks: [],
            })),
            focus: false,
          },
        ]),
  ];
}

// ---- Why a property is violated ----------------------------------------------------------------

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

function producerIdAgreement(s: KafkaView): Explanation | undefined {
  for (const p of s.producers) {
    if (p.status !== 'Running' || !holdingGrant.includes(p.state)) continue;
    // Instance i of transactional.id t is named Pt.i.
    const id = `t${p.name.slice(1).split('.')[0]}`;
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
  const id = `t${p.name.slice(1).split('.')[0]}`;
  return {
    text: `${p.name} (producer id ${p.pid}, epoch ${p.epoch}) went FATAL after "${labels[labels.length - 1] ?? ''}", yet no other instance of ${id} bumped its epoch and the coordinator neither timed out nor expired its transaction.`,
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

function explain(
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
    default:
      return undefined;
  }
}

export const kafkaRenderer: TraceRenderer = { steps, participants, tables, explain };
