// A model trace replayed against a real broker, step by step. Client steps stay in the driver
// until the trace delivers what they sent: a request delivered is sent then, on the connection the
// model names (a request timeout opens the next one, while a held copy may still go out on the
// old one); a request lost is never sent. The broker's own work (markers, completing a
// transaction) cannot be held: it is waited for where the trace takes it. After every step the
// broker's answers and observable state are compared with the model's.
import { randomBytes } from 'node:crypto';
import type { KafkaConfig } from '../../model/kafka/config.ts';
import type { ModelStep, Referee, ScheduledStep } from './walk.ts';
import { isIdempotentNode, isProducerNode } from '../../model/kafka/network.ts';
import {
  type Message,
  type Request,
  type Response,
  type State,
  Api,
  KAFKA_MAX_EPOCH,
  LEADER_BASE,
  NO_STATE,
  TC_NODE,
  TxnState,
  apiName,
  errName,
  txnStateName,
} from '../../model/kafka/state.ts';
import { Connection, ConnectionClosedError, UnsupportedVersionError } from '../driver/connection.ts';
import { createTopic, fetchAt, findCoordinator, isNotYet, waitFor } from '../driver/driver.ts';
import { DescribeTransactions, InitProducerId, IsolationLevel } from '../driver/messages.ts';
import {
  type BrokerNames,
  type Observation,
  ProducerIds,
  observeBroker,
  observeModel,
  translate,
} from './observe.ts';
import { type Answer, CLIENT_APIS, sendRequest } from './wire.ts';
import type { Cluster } from '../cluster.ts';
import { HeldNetwork, MarkerNotSent } from './network.ts';

export interface StepResult {
  /** 1 for the trace's first step. */
  readonly index: number;
  readonly label: string;
  /** What the replay did for it. */
  readonly did: string;
  /** Where the broker and the model first differ after it, with both sides. */
  readonly difference?: { readonly what: string; readonly model: unknown; readonly kafka: unknown };
}

/** `broker-died`: a broker (or a cluster node) went away: the walk is not compared. */
export type ReplayStatus = 'agrees' | 'diverges' | 'unsupported' | 'broker-died';

export interface ReplayOutcome {
  readonly status: ReplayStatus;
  readonly steps: readonly StepResult[];
  /** One line: the verdict, or why the replay stopped. */
  readonly message: string;
  /** The broker's finalized transaction.version. */
  readonly transactionVersion: number;
}

/** A broker that cannot be reached or speaks no version the replay needs: bad input (exit 2). */
export class BrokerUnusableError extends Error {}

/** A step one broker cannot be made to take. */
class Unsupported extends Error {}

/** A cluster node died during the replay. */
class NodeDied extends Error {}

/** An answer the model delivers that the broker never gave. */
class Unanswered extends Error {
  constructor(
    readonly index: number,
    readonly label: string,
    readonly model: Message,
  ) {
    super(`step ${index}: no answer from Kafka in ${ANSWER_TIMEOUT_MS} ms`);
  }
}

/** How long a step waits for the broker's answer or for its state to settle to the model's. */
const ANSWER_TIMEOUT_MS = 10_000;
const SETTLE_TIMEOUT_MS = 5_000;
/** A cluster's __transaction_state appends wait for every in-sync replica, through the proxies. */
const CLUSTER_SETTLE_TIMEOUT_MS = 15_000;
/**
 * The transaction.timeout.ms a cluster's producers ask for when the walk may time a transaction
 * out: short, so that the step waits little for Kafka's own clock, and long enough for a
 * transaction's steps to come first. The cluster checks for timed-out transactions every second.
 */
const SHORT_TRANSACTION_TIMEOUT_MS = 4_000;
const CLEANUP_INTERVAL_MS = 1_000;

const isClient = (node: number): boolean => isProducerNode(node) || isIdempotentNode(node);

/** Whether `ch` carries the coordinator's marker requests, which a cluster's proxies hold. */
function isMarkerChannel(ch: State['network'][number]): boolean {
  return (
    ch.from === TC_NODE &&
    ch.to >= LEADER_BASE &&
    ch.messages.every((m) => m.api === Api.WriteTxnMarkers && !m.response)
  );
}

/**
 * The broker's own work the model still holds in `s`, or undefined when there is none. Against a
 * cluster, markers held for the trace are not such work: Kafka waits for them as the model does.
 */
export function pendingBrokerWork(s: State, referee: Referee = 'broker'): string | undefined {
  const held = (ch: State['network'][number]): boolean => referee === 'cluster' && isMarkerChannel(ch);
  const internal = s.network.find((ch) => !isClient(ch.from) && !isClient(ch.to) && !held(ch));
  if (internal !== undefined) return `${apiName[internal.messages[0]!.api]} between brokers in flight`;
  const verifying = s.partitions.findIndex((p) => p.held.length > 0);
  if (verifying >= 0) return `a Produce to p${verifying} waiting for its verification`;
  if (s.coordinator.appends.length > 0) return 'a __transaction_state append in flight';
  const markersHeld = (t: number): boolean =>
    s.network.some((ch) => held(ch) && ch.messages.some((m) => m.txnId === t));
  const t = s.coordinator.metadata.findIndex(
    (md, t) =>
      md !== null &&
      !markersHeld(t) &&
      (md.pendingState !== NO_STATE ||
        md.state === TxnState.PrepareCommit ||
        md.state === TxnState.PrepareAbort ||
        md.state === TxnState.PrepareEpochFence),
  );
  if (t >= 0)
    return `t${t} in ${txnStateName[s.coordinator.metadata[t]!.state]} until its markers are written`;
  return undefined;
}

/** Why a configuration cannot run on one broker, or undefined. */
export function unsupportedConfig(cfg: KafkaConfig): string | undefined {
  if (cfg.maxEpoch < KAFKA_MAX_EPOCH)
    return `the spec's maxEpoch ${cfg.maxEpoch} is below Kafka's ${KAFKA_MAX_EPOCH}`;
  if (cfg.app !== 'produce')
    return `the ${cfg.app} app needs a consumer group, which the replay does not drive yet`;
  return undefined;
}

/** The first place two JSON values differ, as a path, or undefined. */
export function firstDifference(
  model: unknown,
  kafka: unknown,
  path: string,
): { what: string; model: unknown; kafka: unknown } | undefined {
  if (Array.isArray(model) && Array.isArray(kafka)) {
    for (let i = 0; i < Math.max(model.length, kafka.length); i++) {
      const d = firstDifference(model[i], kafka[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (typeof model === 'object' && model !== null && typeof kafka === 'object' && kafka !== null) {
    const keys = new Set([...Object.keys(model), ...Object.keys(kafka)]);
    for (const k of keys) {
      const d = firstDifference(
        (model as Record<string, unknown>)[k],
        (kafka as Record<string, unknown>)[k],
        path === '' ? k : `${path}.${k}`,
      );
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return Object.is(model, kafka) ? undefined : { what: path, model, kafka };
}

/** The observation's paths by name: transactions by transactional.id, partitions by name. */
function keyed(o: Observation): unknown {
  return {
    coordinator: Object.fromEntries(o.transactions.map((t) => [t.transactionalId, t])),
    partitions: Object.fromEntries(o.partitions.map((p) => [p.partition, p])),
  };
}

export interface ReplayInput {
  /** The broker's address; with `cluster`, any node's. */
  readonly address: string;
  /** A cluster whose network the replay holds (the walk must have been made for one). */
  readonly cluster?: Cluster;
  readonly cfg: KafkaConfig;
  readonly steps: readonly ScheduledStep[];
  /** Told each step's result as it is known (progress). */
  readonly onStep?: (result: StepResult) => void;
  /** Asked before each step: true ends the replay there (a signal), the rest not compared. */
  readonly shouldStop?: () => boolean;
}

export async function replayOnBroker(input: ReplayInput): Promise<ReplayOutcome> {
  const { address } = input;
  let observer: Connection;
  try {
    observer = await Connection.open(address, { requestTimeoutMs: ANSWER_TIMEOUT_MS });
  } catch (e) {
    if (e instanceof UnsupportedVersionError) throw new BrokerUnusableError(e.message);
    throw new BrokerUnusableError(`cannot reach a Kafka broker at ${address}: ${(e as Error).message}`);
  }
  const replay = new Replay(input, observer);
  try {
    return await replay.run();
  } finally {
    replay.close();
  }
}

class Replay {
  private readonly names: BrokerNames;
  private readonly ids = new ProducerIds();
  /** Client connections by model channel: from, to and connection number. */
  private readonly connections = new Map<string, Connection>();
  /** The broker's answers not yet delivered by the trace, by the channel they come back on. */
  private readonly answers = new Map<string, Promise<Answer | Error>[]>();
  private readonly results: StepResult[] = [];
  private readonly transactionVersion: number;
  /** With a cluster: where each model node lives, and the markers held for the trace. */
  private readonly network: HeldNetwork | undefined;
  private readonly referee: Referee;
  /** The transaction.timeout.ms of the replay's producers; short when the walk drives time-outs. */
  private readonly transactionTimeoutMs: number | undefined;
  /** Per transactional id: when the step began that made its transaction Ongoing in the model. */
  private readonly ongoingSince = new Map<number, number>();

  constructor(
    private readonly input: ReplayInput,
    private readonly observer: Connection,
  ) {
    const run = `txcheck-${randomBytes(4).toString('hex')}`;
    this.names = { topic: run, transactionalId: (t) => `${run}-t${t}` };
    const feature = observer.apiVersions?.finalizedFeatures.find((f) => f.name === 'transaction.version');
    this.transactionVersion = feature?.maxVersionLevel ?? 0;
    const { cluster, cfg } = input;
    this.network = cluster === undefined ? undefined : new HeldNetwork(cluster, run, cfg.partitions);
    this.referee = cluster === undefined ? 'broker' : 'cluster';
    const timesOut = cluster !== undefined && (cfg.faults.transactionTimeouts ?? 0) > 0;
    this.transactionTimeoutMs = timesOut ? SHORT_TRANSACTION_TIMEOUT_MS : undefined;
  }

  close(): void {
    this.network?.close();
    this.observer.close();
    for (const c of this.connections.values()) c.close();
  }

  /** Where a model node's requests go now: the one broker, or the cluster node that plays it. */
  private addressOf(node: number): string {
    const net = this.network;
    if (net === undefined) return this.input.address;
    if (node >= LEADER_BASE) return net.leaderAddress(node - LEADER_BASE);
    return net.coordinatorAddress();
  }

  /** The replay's own connection to the coordinator, for reads. */
  private coordinatorObserver(): Promise<Connection> {
    return this.network?.coordinator() ?? Promise.resolve(this.observer);
  }

  /** The replay's own connection to partition p's leader, for reads. */
  private leaderObserver(partition: number): Promise<Connection> {
    return this.network?.leader(partition) ?? Promise.resolve(this.observer);
  }

  /** Settles `work`, unless a cluster node dies first. */
  private guarded<T>(work: Promise<T>): Promise<T> {
    const cluster = this.input.cluster;
    if (cluster === undefined) return work;
    const died = cluster.died.then((id) => {
      throw new NodeDied(`node ${id} of the cluster died`);
    });
    return Promise.race([work, died]);
  }

  async run(): Promise<ReplayOutcome> {
    const { cfg, steps } = this.input;
    const config = unsupportedConfig(cfg);
    if (config !== undefined) return this.outcome('unsupported', `stopped before step 1: ${config}`);
    try {
      await this.guarded(this.prepare());
      for (const st of steps) {
        if (this.input.shouldStop?.() === true)
          throw new Unsupported(
            `stopped by a signal before step ${st.index}, ${this.results.length} steps compared`,
          );
        if (st.taken === undefined) {
          this.record({ index: st.index, label: st.label, did: 'done by the broker at once, earlier' });
          continue;
        }
        for (const m of [st.taken, ...st.broker]) this.noteMarkers(m.after);
        const began = Date.now();
        const did = await this.guarded(this.take(st.index, st.taken));
        const after = st.broker.at(-1)?.after ?? st.taken.after;
        this.noteOngoing(after, began);
        const { difference, note } =
          did.difference === undefined
            ? await this.guarded(this.compare(after, did.answer))
            : { difference: did.difference, note: undefined };
        const ownClock = this.network?.timedOutByKafka();
        if (ownClock !== undefined)
          throw new Unsupported(`stopped at step ${st.index} (${st.label}): ${ownClock}`);
        const own = st.broker.length === 0 ? '' : `; then the broker's own ${brokerWork(st.broker)}`;
        const text = `${did.text}${own}${note === undefined ? '' : ` (${note})`}`;
        const early = difference === undefined ? undefined : this.timedOutEarly(st.label);
        if (early !== undefined) throw new Unsupported(`stopped at step ${st.index} (${st.label}): ${early}`);
        this.record({ index: st.index, label: st.label, did: text, ...(difference && { difference }) });
        if (difference !== undefined)
          return this.outcome(
            'diverges',
            `diverges from Kafka at step ${st.index} (${st.label}): ${difference.what}: model ${show(difference.model)}, Kafka ${show(difference.kafka)}`,
          );
      }
      return this.outcome('agrees', `agrees with Kafka on every step (${steps.length} steps)`);
    } catch (e) {
      if (e instanceof Unsupported) return this.outcome('unsupported', e.message);
      if (e instanceof Unanswered) {
        const what = `${apiName[e.model.api]} response`;
        const difference = { what, model: errName[(e.model as Response).error], kafka: undefined };
        this.record({ index: e.index, label: e.label, did: 'no answer', difference });
        return this.outcome(
          'diverges',
          `diverges from Kafka at step ${e.index} (${e.label}): ${what}: model ${show(difference.model)}, Kafka none in ${ANSWER_TIMEOUT_MS} ms`,
        );
      }
      if (e instanceof UnsupportedVersionError) throw new BrokerUnusableError(e.message);
      if (e instanceof NodeDied)
        return this.outcome('broker-died', `${e.message} after ${this.results.length} steps compared`);
      if (e instanceof ConnectionClosedError || (e as NodeJS.ErrnoException).code === 'ECONNREFUSED')
        return this.outcome(
          'broker-died',
          `${this.network === undefined ? 'the broker' : 'a node of the cluster'} went away after ${this.results.length} steps compared: ${(e as Error).message}`,
        );
      throw e;
    }
  }

  private outcome(status: ReplayStatus, message: string): ReplayOutcome {
    return { status, steps: this.results, message, transactionVersion: this.transactionVersion };
  }

  private record(result: StepResult): void {
    this.results.push(result);
    this.input.onStep?.(result);
  }

  /** A fresh topic, and the transaction coordinator created and loaded. */
  private async prepare(): Promise<void> {
    const { cfg } = this.input;
    // DescribeTransactions answers NOT_FOUND while __transaction_state still loads, so the
    // coordinator is known to serve once a transactional.id of the replay's own has been initialized.
    const ready = `${this.names.topic}-ready`;
    let coordinator = this.observer;
    if (this.network !== undefined) coordinator = await this.network.prepare(ready);
    else {
      const made = await createTopic(this.observer, this.names.topic, cfg.partitions);
      if (made !== 'NONE') throw new Error(`CreateTopics ${this.names.topic}: ${made}`);
      await findCoordinator(this.observer, 'transaction', ready);
    }
    const init = await waitFor(
      'the transaction coordinator to load',
      () =>
        coordinator.send(InitProducerId, {
          transactionalId: ready,
          transactionTimeoutMs: 60_000,
          producerId: -1,
          producerEpoch: -1,
        }),
      (a) => !isNotYet(a.error),
    );
    if (init.error !== 'NONE') throw new Error(`InitProducerId ${ready}: ${init.error}`);
  }

  /** Does step `index` on the broker, or refuses it; says what it did, and the answer it delivered. */
  private async take(
    index: number,
    st: ModelStep,
  ): Promise<{
    text: string;
    answer?: { model: Response; kafka: Answer };
    difference?: StepResult['difference'];
  }> {
    const { step, action: a } = st;
    const refuse = (why: string): never => {
      throw new Unsupported(`stopped at step ${index} (${st.label}): ${why}`);
    };
    switch (step.kind) {
      case 'deliver':
      case 'lose': {
        const key = `${a.actor}>${a.target}#${a.conn}`;
        const message = head(st.before, a.actor, a.target, a.conn);
        if (a.actor === TC_NODE && message.api === Api.WriteTxnMarkers && !message.response)
          return this.marker(st, message as Request, step.kind === 'deliver');
        if (isClient(a.actor)) {
          if (step.kind === 'lose') return { text: 'held, never sent' };
          if (!CLIENT_APIS.has(message.api)) refuse(`the replay does not send ${apiName[message.api]} yet`);
          const connection = await this.connection(key, this.addressOf(a.target));
          const answer = sendRequest(
            connection,
            message as never,
            this.names,
            this.ids,
            this.transactionTimeoutMs,
          ).catch((e: Error) => e);
          const back = `${a.target}>${a.actor}#${a.conn}`;
          this.answers.set(back, [...(this.answers.get(back) ?? []), answer]);
          // Let the broker act on it before the next step; an answer it holds back is awaited later.
          const early = await Promise.race([answer, delay(1_000)]);
          if (early instanceof Error) throw early;
          return {
            text: `sent ${apiName[message.api]}${early === undefined ? ' (no answer yet)' : ` (Kafka answered ${early.error})`}`,
          };
        }
        if (isClient(a.target)) {
          const queue = this.answers.get(key) ?? [];
          const answer = queue.shift();
          if (answer === undefined) throw new Error(`step ${index}: no request was sent for this answer`);
          const kafka = await Promise.race([answer, delay(ANSWER_TIMEOUT_MS)]);
          if (kafka instanceof Error) throw kafka;
          if (kafka === undefined) throw new Unanswered(index, st.label, message);
          if (step.kind === 'lose') return { text: `answer ${kafka.error} dropped` };
          return { text: `answered ${kafka.error}`, answer: { model: message as Response, kafka } };
        }
        throw new Error(`step ${index}: broker work given to the replay as a trace step`);
      }
      case 'idempotentInitProducerId': {
        // The model gives an idempotent producer its id in one step; the broker answers an InitProducerId.
        const j = a.actor;
        const connection = await this.connection(`I${j}>init`, this.addressOf(TC_NODE));
        const answer = await connection.send(InitProducerId, {
          transactionalId: null,
          transactionTimeoutMs: 60_000,
          producerId: -1,
          producerEpoch: -1,
        });
        const model = st.after.idempotentProducers[j]!;
        const text = `sent InitProducerId without transactional.id (Kafka answered ${answer.error})`;
        const same = answer.error === 'NONE' && this.ids.bind(model.pid, answer.producerId);
        if (same && answer.producerEpoch === model.epoch) return { text };
        return {
          text,
          difference: {
            what: 'InitProducerId response',
            model: { error: 'NONE', producerId: model.pid, producerEpoch: model.epoch },
            kafka: {
              error: answer.error,
              producerId: this.ids.model(answer.producerId),
              producerEpoch: answer.producerEpoch,
            },
          },
        };
      }
      case 'fetch': {
        // What the consumer delivers in this step against what a read_committed fetch from its position returns.
        const [before, after] = [st.before.consumers[a.actor]!, st.after.consumers[a.actor]!];
        const model = after.delivered
          .slice(before.delivered.length)
          .filter((d) => d.partition === a.target)
          .map((d) => d.offset);
        const from = before.position[a.target]!;
        const isolation = before.readCommitted
          ? IsolationLevel.READ_COMMITTED
          : IsolationLevel.READ_UNCOMMITTED;
        const fetched = await fetchAt(
          await this.leaderObserver(a.target),
          this.names.topic,
          a.target,
          from,
          isolation,
        );
        const kafka = fetched.records.map((r) => r.offset);
        const level = before.readCommitted ? 'read_committed' : 'read_uncommitted';
        const text = `${level} fetch from offset ${from}: ${kafka.length} records`;
        const difference = firstDifference(model, kafka, `consumers.C${a.actor}.p${a.target} delivered`);
        return { text, ...(difference && { difference }) };
      }
      case 'markerTimeout': {
        const p = a.target;
        await this.network!.markerTimeout(p, st.before.coordinator.markerConns[p]!);
        return { text: `closed the coordinator's marker connection to p${p}'s leader under its request` };
      }
      case 'coordinatorFailover':
        return this.failover(st);
      case 'transactionTimeout':
        return this.transactionTimeout(a.actor);
      default:
        return { text: 'client only' };
    }
  }

  /**
   * The coordinator times transaction t out on its own clock: the replay's producers asked for a
   * short transaction.timeout.ms, and the step waits until Kafka has aborted the transaction.
   */
  private async transactionTimeout(t: number): Promise<{ text: string }> {
    const since = this.ongoingSince.get(t) ?? Date.now();
    const limit = this.transactionTimeoutMs! + 2 * CLEANUP_INTERVAL_MS + SETTLE_TIMEOUT_MS;
    const transactionalIds = [this.names.transactionalId(t)];
    await waitFor(
      `Kafka to time t${t} out`,
      async () =>
        (await (await this.coordinatorObserver()).send(DescribeTransactions, { transactionalIds }))
          .transactionStates[0]!,
      (d) => d.error === 'NONE' && d.transactionState !== 'Ongoing',
      Math.max(since + limit - Date.now(), 1),
    );
    return {
      text: `waited for Kafka to time the transaction out (transaction.timeout.ms ${this.transactionTimeoutMs})`,
    };
  }

  /** Notes when each transaction of the model went Ongoing, at the latest `began`. */
  private noteOngoing(after: State, began: number): void {
    after.coordinator.metadata.forEach((md, t) => {
      if (md?.state !== TxnState.Ongoing) this.ongoingSince.delete(t);
      else if (!this.ongoingSince.has(t)) this.ongoingSince.set(t, began);
    });
  }

  /**
   * Why a difference may be Kafka's clock rather than its rules: a transaction the model still has
   * Ongoing has outlived the short transaction.timeout.ms, so Kafka may have aborted it by itself.
   */
  private timedOutEarly(label: string): string | undefined {
    if (this.transactionTimeoutMs === undefined) return undefined;
    for (const [t, since] of this.ongoingSince) {
      if (Date.now() - since >= this.transactionTimeoutMs && !label.startsWith('TC: transactionTimeout'))
        return `t${t} has been Ongoing past its transaction.timeout.ms of ${this.transactionTimeoutMs}: Kafka may have timed it out on its own clock`;
    }
    return undefined;
  }

  /** A model channel's connection to `address` (the node that plays the channel's target now). */
  private async connection(key: string, address: string): Promise<Connection> {
    const at = `${key}@${address}`;
    let c = this.connections.get(at);
    if (c === undefined) {
      c = await Connection.open(address, { requestTimeoutMs: ANSWER_TIMEOUT_MS });
      this.connections.set(at, c);
    }
    return c;
  }

  /** Notes the model's marker connections in `s`, so that each is matched to the cluster's own. */
  private noteMarkers(s: State): void {
    if (this.network === undefined) return;
    for (const ch of s.network)
      if (
        ch.from === TC_NODE &&
        ch.to >= LEADER_BASE &&
        ch.messages.some((m) => m.api === Api.WriteTxnMarkers)
      )
        this.network.noteModelConnection(ch.to - LEADER_BASE, ch.conn);
  }

  /**
   * The coordinator's marker request, held at the leader's proxy, is released (delivered) or
   * dropped (lost); the marker it carries is compared with the model's.
   */
  private async marker(
    st: ModelStep,
    model: Request,
    deliver: boolean,
  ): Promise<{ text: string; difference?: StepResult['difference'] }> {
    const p = st.action.target - LEADER_BASE;
    let markers;
    try {
      markers = await this.network!.marker(p, st.action.conn, deliver);
    } catch (e) {
      if (!(e instanceof MarkerNotSent)) throw e;
      return {
        text: e.message,
        difference: { what: 'WriteTxnMarkers request', model: 'sent', kafka: undefined },
      };
    }
    if (markers.length !== 1)
      throw new Unsupported(
        `stopped at ${st.label}: Kafka's coordinator sent ${markers.length} markers in one request, the model one per request`,
      );
    const kafka = markers[0]!;
    const text = `${deliver ? 'released' : 'dropped'} the coordinator's WriteTxnMarkers (${kafka.transactionResult ? 'COMMIT' : 'ABORT'})`;
    const seen = {
      result: kafka.transactionResult ? 'COMMIT' : 'ABORT',
      producerId: this.ids.model(kafka.producerId),
      producerEpoch: kafka.producerEpoch,
    };
    const expected = {
      result: model.commit ? 'COMMIT' : 'ABORT',
      producerId: model.pid,
      producerEpoch: model.epoch,
    };
    const difference = firstDifference(expected, seen, 'WriteTxnMarkers request');
    return { text, ...(difference && { difference }) };
  }

  /**
   * The coordinator fails over: its partition's leadership moves to another node, which loads
   * it. The requests the model has on their way to the coordinator then reach the old one, which
   * answers NOT_COORDINATOR as the model does.
   */
  private async failover(st: ModelStep): Promise<{ text: string }> {
    const ids = Array.from({ length: this.input.cfg.transactionalIds }, (_, t) =>
      this.names.transactionalId(t),
    );
    const old = await this.network!.failover(ids);
    let late = 0;
    for (const ch of st.before.network) {
      if (ch.to !== TC_NODE || !isClient(ch.from)) continue;
      const connection = await this.connection(`${ch.from}>${ch.to}#${ch.conn}`, old);
      const back = `${ch.to}>${ch.from}#${ch.conn}`;
      for (const m of ch.messages) {
        if (m.response) continue;
        const answer = sendRequest(
          connection,
          m as never,
          this.names,
          this.ids,
          this.transactionTimeoutMs,
        ).catch((e: Error) => e);
        this.answers.set(back, [...(this.answers.get(back) ?? []), answer]);
        late++;
      }
    }
    const moved = `moved the coordinator from ${old} to ${this.network!.coordinatorAddress()}`;
    return { text: late === 0 ? moved : `${moved}; ${late} requests on their way reach the old one` };
  }

  /**
   * The first difference after a step: in the answer delivered, then, where the model holds none
   * of the broker's own work, in the observable state (waited for while the broker finishes).
   */
  private async compare(
    after: State,
    answer: { model: Response; kafka: Answer } | undefined,
  ): Promise<{ difference?: StepResult['difference']; note?: string }> {
    if (answer !== undefined) {
      const difference = this.compareAnswer(answer.model, answer.kafka);
      if (difference !== undefined) return { difference };
    }
    const pending = pendingBrokerWork(after, this.referee);
    if (pending !== undefined) return { note: `state not compared: the model still holds ${pending}` };
    const model = observeModel(this.input.cfg, after);
    const deadline =
      Date.now() + (this.network === undefined ? SETTLE_TIMEOUT_MS : CLUSTER_SETTLE_TIMEOUT_MS);
    for (;;) {
      const coordinator = await this.coordinatorObserver();
      const leaders = await Promise.all(
        Array.from({ length: this.input.cfg.partitions }, (_, p) => this.leaderObserver(p)),
      );
      const kafka = translate(
        await observeBroker({ coordinator, leaders }, this.names, this.input.cfg),
        model,
        this.ids,
      );
      const difference = firstDifference(keyed(model), keyed(kafka), '');
      if (difference === undefined) return {};
      if (Date.now() > deadline) return { difference };
      await delay(50);
    }
  }

  private compareAnswer(model: Response, kafka: Answer): StepResult['difference'] {
    const what = `${kafka.api} response`;
    const modelError = errName[model.error]!;
    if (modelError !== kafka.error) return { what: `${what} error`, model: modelError, kafka: kafka.error };
    const carriesIds =
      kafka.error === 'NONE' &&
      kafka.producerId !== undefined &&
      (model.api === Api.InitProducerId || model.api === Api.EndTxn);
    if (!carriesIds) return undefined;
    if (!this.ids.bind(model.pid, kafka.producerId!))
      return { what: `${what} producer id`, model: model.pid, kafka: this.ids.model(kafka.producerId!) };
    if (model.epoch !== kafka.producerEpoch)
      return { what: `${what} epoch`, model: model.epoch, kafka: kafka.producerEpoch };
    return undefined;
  }
}

/** The broker's own steps by kind, e.g. "2 WriteTxnMarkers, completeTransaction". */
function brokerWork(steps: readonly ModelStep[]): string {
  const kinds = steps.map((m) =>
    m.step.kind === 'deliver'
      ? `${m.step.api}${m.label.endsWith(' response') ? ' response' : ''}`
      : m.step.kind,
  );
  const counts = new Map<string, number>();
  for (const k of kinds) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts].map(([k, n]) => (n === 1 ? k : `${n} ${k}`)).join(', ');
}

function head(s: State, from: number, to: number, conn: number): Message {
  const ch = s.network.find((c) => c.from === from && c.to === to && c.conn === conn);
  if (ch === undefined) throw new Error(`no channel ${from}→${to}#${conn} in the model's state`);
  return ch.messages[0]!;
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
