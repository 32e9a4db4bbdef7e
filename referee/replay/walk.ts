// A saved trace re-executed through the Kafka model as one real broker would run it. The trace's
// client steps (the clients' own actions, requests and answers delivered or lost, consumer
// fetches) are taken in its order; the broker's own work (markers between coordinator and
// leaders, verification, appends, completing a transaction) is done at once after each step,
// as a single broker does it, and the trace's own labels for that work are passed over. Against a
// cluster whose network the replay holds, the coordinator's markers wait for the trace, and a
// marker time-out and a coordinator failover are steps it takes. The model's states are kept
// whole: the replay needs what views leave out (a request's version bits).
import type { KafkaConfig } from '../../model/kafka/config.ts';
import { initialState } from '../../model/kafka/index.ts';
import {
  type Action,
  type Step,
  actionLabel,
  isLabelError,
  parseLabel,
  stepOf,
} from '../../model/kafka/labels.ts';
import { isIdempotentNode, isProducerNode } from '../../model/kafka/network.ts';
import { enabledActions, step } from '../../model/kafka/next.ts';
import { Api, LEADER_BASE, type State, TC_NODE, apiName } from '../../model/kafka/state.ts';

/** What a replay runs against: one broker, or a cluster behind proxies the replay holds. */
export type Referee = 'broker' | 'cluster';

export interface ModelStep {
  readonly label: string;
  readonly step: Step;
  readonly action: Action;
  /** The states before and after the step. */
  readonly before: State;
  readonly after: State;
}

/** One step of the trace, and the broker's own work that follows it at once. */
export interface ScheduledStep {
  /** 1 for the trace's first step. */
  readonly index: number;
  readonly label: string;
  /** The step as the model takes it; undefined for broker work the broker had already done. */
  readonly taken?: ModelStep;
  /** The broker's own steps done right after it. */
  readonly broker: readonly ModelStep[];
}

export interface Walk {
  readonly steps: readonly ScheduledStep[];
  /** Where the walk stopped: a label the model cannot take here, or a step one broker cannot take. */
  readonly stop?: { readonly index: number; readonly label: string; readonly why: string };
  /** The model's last state. */
  readonly last: State;
}

const isClient = (node: number): boolean => isProducerNode(node) || isIdempotentNode(node);

/** A WriteTxnMarkers request from the coordinator to a leader: a cluster's proxy holds it for the trace. */
function isMarkerRequest(s: Step, a: Action): boolean {
  return (
    (s.kind === 'deliver' || s.kind === 'lose') &&
    s.api === apiName[Api.WriteTxnMarkers] &&
    a.actor === TC_NODE &&
    a.target >= LEADER_BASE
  );
}

/**
 * Broker steps a cluster takes of its own accord at once: the new coordinator loads the log, and
 * a timed-out marker request is re-sent on a new connection.
 */
const CLUSTER_AT_ONCE: ReadonlySet<string> = new Set(['loadTransactions', 'resendTxnMarker']);
/** Broker steps the replay makes a cluster take when the trace does. */
const CLUSTER_DRIVES: ReadonlySet<string> = new Set([
  'coordinatorFailover',
  'markerTimeout',
  'transactionTimeout',
]);

/** Work a broker does of its own accord, at once. */
function isBrokerWork(s: Step, a: Action, referee: Referee): boolean {
  if (referee === 'cluster' && CLUSTER_AT_ONCE.has(s.kind)) return true;
  if (s.kind === 'deliver')
    return !isClient(a.actor) && !isClient(a.target) && !(referee === 'cluster' && isMarkerRequest(s, a));
  return s.kind === 'completeTransaction' || s.kind === 'completeAppend';
}

/** Steps a broker takes at a moment of its own (a timeout, a failover): one broker cannot be made to. */
const BROKER_FAULTS: ReadonlySet<string> = new Set([
  'transactionTimeout',
  'coordinatorFailover',
  'resendTxnMarker',
  'verificationTimeout',
  'failAppend',
  'markerTimeout',
  'transactionalIdExpiry',
  'producerStateExpiry',
  'loadTransactions',
  'finalizeTransactionVersion',
]);

/** Why `referee` cannot take a step of this kind at a chosen moment, or undefined when it can. */
function refused(kind: string, referee: Referee): string | undefined {
  if (!BROKER_FAULTS.has(kind)) return undefined;
  if (referee === 'broker') return 'one broker cannot be made to take this step at a chosen moment';
  if (CLUSTER_DRIVES.has(kind) || CLUSTER_AT_ONCE.has(kind)) return undefined;
  return CLUSTER_REFUSES[kind] ?? 'the cluster cannot be made to take this step at a chosen moment';
}

/** The broker steps a cluster does not take yet, and why (the README lists them too). */
const CLUSTER_REFUSES: Readonly<Record<string, string>> = {
  verificationTimeout: "the replay does not hold a leader's verification yet",
  failAppend: 'a failed __transaction_state append cannot be caused through the network alone',
  transactionalIdExpiry: 'the replay does not drive transactional.id expiry yet',
  producerStateExpiry: 'the replay does not drive producer state expiry yet',
  finalizeTransactionVersion: 'the replay does not change transaction.version while it runs',
};

/** Whether a replay drives `a` itself: a client's step, a consumer's, or a message to or from a client. */
export function isDrivable(cfg: KafkaConfig, a: Action, referee: Referee = 'broker'): boolean {
  const s = stepOf(cfg, a);
  if (referee === 'cluster' && CLUSTER_AT_ONCE.has(s.kind)) return false;
  if (refused(s.kind, referee) !== undefined) return false;
  if (s.kind === 'deliver' || s.kind === 'lose')
    return isClient(a.actor) || isClient(a.target) || (referee === 'cluster' && isMarkerRequest(s, a));
  return !isBrokerWork(s, a, referee);
}

/** The broker's own work after a step, in the order the model lists it, until none is left. */
function settle(
  cfg: KafkaConfig,
  from: State,
  take: (s: State, a: Action) => State,
  referee: Referee,
): State {
  let s = from;
  for (let n = 0; ; n++) {
    const action = enabledActions(cfg, s).find((a) => isBrokerWork(stepOf(cfg, a), a, referee));
    if (action === undefined) return s;
    if (n > 10_000) throw new Error('the broker work of one step does not end');
    s = take(s, action);
  }
}

/**
 * Faults a client, the network or (on a cluster) the brokers make; a walk takes them less often,
 * so that it gets somewhere first.
 */
const FAULTS: ReadonlySet<string> = new Set([
  'lose',
  'requestTimeout',
  'produceTimeout',
  'batchExpired',
  'crash',
  'coordinatorFailover',
  'markerTimeout',
  'transactionTimeout',
]);
const FAULT_WEIGHT = 0.2;

/**
 * A random run of the model that one broker can take: drivable steps chosen by `random` (a
 * fault a fifth as often as another step), the broker's work done at once after each, up to
 * `maxSteps` drivable steps. Its labels, walked with walkTrace, give the same run.
 */
export function randomLabels(
  cfg: KafkaConfig,
  random: () => number,
  maxSteps: number,
  referee: Referee = 'broker',
  timings?: Timings,
): string[] {
  let s = initialState(cfg);
  const labels: string[] = [];
  while (labels.length < maxSteps) {
    const enabled = enabledActions(cfg, s);
    if (timings !== undefined)
      for (const kind of new Set(enabled.map((a) => stepOf(cfg, a).kind)))
        if (refused(kind, referee) !== undefined) count(timings.passedOver, kind);
    const drivable = enabled.filter((a) => isDrivable(cfg, a, referee));
    if (drivable.length === 0) break;
    const weights = drivable.map((a) => (FAULTS.has(stepOf(cfg, a).kind) ? FAULT_WEIGHT : 1));
    let r = random() * weights.reduce((x, y) => x + y, 0);
    const a = drivable.find((_, i) => (r -= weights[i]!) < 0) ?? drivable.at(-1)!;
    labels.push(actionLabel(cfg, a));
    s = settle(
      cfg,
      step(cfg, s, a),
      (t, b) => {
        if (timings !== undefined) count(timings.brokerWork, brokerWorkName(actionLabel(cfg, b)));
        return step(cfg, t, b);
      },
      referee,
    );
  }
  return labels;
}

/**
 * What one broker times by itself in a run of walks, and so what they do not test: its own work,
 * done at once after the step before it (the model's other orders of that work are not compared),
 * and the steps it takes at a moment of its own, enabled but passed over (counted once a state).
 */
export interface Timings {
  readonly brokerWork: Map<string, number>;
  readonly passedOver: Map<string, number>;
}

export const noTimings = (): Timings => ({ brokerWork: new Map(), passedOver: new Map() });

function count(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** A message between brokers by its API ("WriteTxnMarkers response"), other work by its kind. */
function brokerWorkName(label: string): string {
  const message = /^deliver [^:]+: (.+)$/.exec(label);
  return message === null ? (/(\w+)\(/.exec(label)?.[1] ?? label) : message[1]!;
}

/** The steps of `labels` from the model's initial state, with the broker's work done eagerly. */
export function walkTrace(cfg: KafkaConfig, labels: readonly string[], referee: Referee = 'broker'): Walk {
  let s = initialState(cfg);
  const take = (label: string, parsed: Step, action: Action): ModelStep => {
    const after = step(cfg, s, action);
    const taken = { label, step: parsed, action, before: s, after };
    s = after;
    return taken;
  };
  const brokerWork = (): ModelStep[] => {
    const done: ModelStep[] = [];
    settle(
      cfg,
      s,
      (_, a) => {
        done.push(take(actionLabel(cfg, a), stepOf(cfg, a), a));
        return s;
      },
      referee,
    );
    return done;
  };
  const steps: ScheduledStep[] = [];
  for (const [i, label] of labels.entries()) {
    const index = i + 1;
    const parsed = parseLabel(label);
    if (isLabelError(parsed)) return { steps, last: s, stop: { index, label, why: parsed.error } };
    const why = refused(parsed.kind, referee);
    if (why !== undefined) return { steps, last: s, stop: { index, label, why } };
    const heldMarker =
      referee === 'cluster' &&
      parsed.kind === 'lose' &&
      parsed.api === apiName[Api.WriteTxnMarkers] &&
      parsed.from.role === 'coordinator';
    if (parsed.kind === 'lose' && !isClientNode(parsed.from) && !isClientNode(parsed.to) && !heldMarker)
      return {
        steps,
        last: s,
        stop: {
          index,
          label,
          why:
            referee === 'broker'
              ? 'one broker cannot lose its own requests'
              : "the replay loses only the coordinator's marker requests between brokers",
        },
      };
    const action = enabledActions(cfg, s).find((a) => actionLabel(cfg, a) === label);
    if (action === undefined) {
      const brokerWork =
        parsed.kind === 'completeTransaction' ||
        parsed.kind === 'completeAppend' ||
        (referee === 'cluster' && CLUSTER_AT_ONCE.has(parsed.kind)) ||
        (parsed.kind === 'deliver' &&
          !isClientNode(parsed.from) &&
          !isClientNode(parsed.to) &&
          !(
            referee === 'cluster' &&
            parsed.api === apiName[Api.WriteTxnMarkers] &&
            parsed.from.role === 'coordinator'
          ));
      if (brokerWork) {
        steps.push({ index, label, broker: [] });
        continue;
      }
      return {
        steps,
        last: s,
        stop: { index, label, why: `the model (${cfg.variant}) cannot take it here` },
      };
    }
    const taken = take(label, parsed, action);
    steps.push({ index, label, taken, broker: brokerWork() });
  }
  return { steps, last: s };
}

function isClientNode(node: { readonly role: string }): boolean {
  return node.role === 'producer' || node.role === 'idempotentProducer';
}
