// Differential testing against one broker, or a three-node cluster whose network the replay
// holds: random runs of the model that the referee can take (the brokers' other work done at
// once), each replayed on fresh ids and compared step by step. A run that differs is shrunk, by
// dropping steps while the same difference shows, to the shortest one found.
import { walkRandom } from '../checker/engine/random.ts';
import type { KafkaConfig } from '../model/kafka/config.ts';
import { startBroker } from './broker.ts';
import { type Cluster, startCluster } from './cluster.ts';
import { traceTransactionVersion } from './replay/index.ts';
import { BrokerUnusableError, type ReplayOutcome, type StepResult, replayOnBroker } from './replay/replay.ts';
import { type Referee, type Timings, noTimings, randomLabels, walkTrace } from './replay/walk.ts';

export interface ConformOptions {
  /** HOST:PORT of a running broker, or a release to start at the model's transaction version. */
  readonly target: string;
  /** Start a three-node cluster of the release, behind the replay's proxies. */
  readonly cluster?: boolean;
  readonly params: unknown;
  readonly seed: number;
  readonly walks: number;
  /** The most steps of a walk the broker drives. */
  readonly maxDepth: number;
  readonly maxSeconds?: number;
  readonly onWalk?: (walk: WalkResult) => void;
  /** Asked before each walk and step: true ends the run there (a signal). */
  readonly shouldStop?: () => boolean;
}

export interface WalkResult {
  readonly walk: number;
  /** `error`: the walk met an internal error (a bug of the replay or the model); the run goes on. */
  readonly status: ReplayOutcome['status'] | 'error';
  /** Steps compared with the broker. */
  readonly steps: number;
  readonly message: string;
  /** A walk that differs: the first difference's field, and the shortest walk found that shows it. */
  readonly difference?: string;
  readonly shrunk?: readonly string[];
  /** The broker's side of the shortest walk, step by step. */
  readonly observed?: readonly StepResult[];
}

export interface ConformResult {
  readonly broker: string;
  readonly transactionVersion: number;
  readonly walks: readonly WalkResult[];
  /** Why the run ended before its walks: the time bound, a broker that died, or a signal. */
  readonly stoppedBy?: 'maxSeconds' | 'broker-died' | 'signal';
  /** The broker's timings the walks did not choose: its own work, and its own moments passed over. */
  readonly timings: Timings;
}

/** Where the walks run: a broker's address, or a cluster (any node's address). */
export interface On {
  readonly address: string;
  readonly cluster?: Cluster;
}

const refereeOf = (on: On): Referee => (on.cluster === undefined ? 'broker' : 'cluster');

async function replayLabels(
  on: On,
  cfg: KafkaConfig,
  labels: readonly string[],
  shouldStop?: () => boolean,
): Promise<ReplayOutcome> {
  return replayOnBroker({
    ...on,
    cfg,
    steps: walkTrace(cfg, labels, refereeOf(on)).steps,
    ...(shouldStop && { shouldStop }),
  });
}

const kindOf = (outcome: ReplayOutcome): string | undefined =>
  outcome.steps.find((s) => s.difference !== undefined)?.difference?.what;

/**
 * Drops one step at a time, from the last, while the replay still differs in the same field;
 * the steps after the first difference go first, as they cannot matter to it.
 */
async function shrink(
  on: On,
  cfg: KafkaConfig,
  labels: readonly string[],
  found: ReplayOutcome,
): Promise<{ labels: string[]; outcome: ReplayOutcome }> {
  const what = kindOf(found)!;
  const differsAt = found.steps.find((st) => st.difference !== undefined)!.index;
  let best = { labels: labels.slice(0, differsAt), outcome: found };
  for (let i = best.labels.length - 1; i >= 0; i--) {
    const candidate = [...best.labels.slice(0, i), ...best.labels.slice(i + 1)];
    if (walkTrace(cfg, candidate, refereeOf(on)).stop !== undefined) continue;
    const outcome = await replayLabels(on, cfg, candidate);
    if (outcome.status === 'diverges' && kindOf(outcome) === what) best = { labels: candidate, outcome };
  }
  return best;
}

/** The walks of `options` against a broker or cluster already running. */
export async function conformOn(
  on: On,
  cfg: KafkaConfig,
  options: ConformOptions,
): Promise<Omit<ConformResult, 'broker'>> {
  const walks: WalkResult[] = [];
  const timings = noTimings();
  const deadline = options.maxSeconds === undefined ? Infinity : Date.now() + options.maxSeconds * 1000;
  let transactionVersion = 0;
  for (let walk = 0; walk < options.walks; walk++) {
    if (Date.now() > deadline) return { transactionVersion, walks, stoppedBy: 'maxSeconds', timings };
    if (options.shouldStop?.() === true) return { transactionVersion, walks, stoppedBy: 'signal', timings };
    const labels = randomLabels(
      cfg,
      walkRandom(options.seed, walk),
      options.maxDepth,
      refereeOf(on),
      timings,
    );
    let outcome: ReplayOutcome;
    try {
      outcome = await replayLabels(on, cfg, labels, options.shouldStop);
    } catch (e) {
      if (e instanceof BrokerUnusableError) throw e;
      const failed: WalkResult = {
        walk,
        status: 'error',
        steps: 0,
        message: `internal error: ${(e as Error).message}`,
      };
      walks.push(failed);
      options.onWalk?.(failed);
      continue;
    }
    transactionVersion = outcome.transactionVersion;
    if (options.shouldStop?.() === true) return { transactionVersion, walks, stoppedBy: 'signal', timings };
    const what = kindOf(outcome);
    const shrunk = what === undefined ? undefined : await shrink(on, cfg, labels, outcome);
    // A difference that the shortest walk does not show again was the machine's, not Kafka's
    // (a broker starved of CPU past the wait): the walk is not compared.
    const confirmed =
      shrunk === undefined || kindOf(await replayLabels(on, cfg, shrunk.labels, options.shouldStop)) === what;
    if (options.shouldStop?.() === true) return { transactionVersion, walks, stoppedBy: 'signal', timings };
    const result: WalkResult =
      shrunk === undefined || !confirmed
        ? {
            walk,
            status: confirmed ? outcome.status : 'unsupported',
            steps: outcome.steps.length,
            message: confirmed
              ? outcome.message
              : `not compared: it ${outcome.message}, but not when run again`,
          }
        : {
            walk,
            status: outcome.status,
            steps: outcome.steps.length,
            message: outcome.message,
            difference: what,
            shrunk: shrunk.labels,
            observed: shrunk.outcome.steps,
          };
    walks.push(result);
    options.onWalk?.(result);
    if (outcome.status === 'broker-died')
      return { transactionVersion, walks, stoppedBy: 'broker-died', timings };
  }
  return { transactionVersion, walks, timings };
}

export async function conform(options: ConformOptions): Promise<ConformResult> {
  const cfg = options.params as KafkaConfig;
  const release = /^\d+\.\d+\.\d+$/.test(options.target);
  if (options.cluster === true) {
    if (!release)
      throw new BrokerUnusableError(
        `--kafka-cluster: expected a Kafka release such as 4.1.1, got ${options.target}`,
      );
    const cluster = await startCluster({ version: options.target, tv: traceTransactionVersion(cfg) });
    try {
      const on = { address: cluster.node(1).address, cluster };
      return { broker: `a cluster of Kafka ${options.target}`, ...(await conformOn(on, cfg, options)) };
    } finally {
      await cluster.stop();
    }
  }
  if (release) {
    const broker = await startBroker({ version: options.target, tv: traceTransactionVersion(cfg) });
    try {
      return {
        broker: `Kafka ${options.target}`,
        ...(await conformOn({ address: broker.address }, cfg, options)),
      };
    } finally {
      await broker.stop();
    }
  }
  if (!/^[^\s:]+:\d{1,5}$/.test(options.target))
    throw new BrokerUnusableError(
      `--kafka: expected HOST:PORT or a Kafka release such as 4.1.1, got ${options.target}`,
    );
  return {
    broker: `the broker at ${options.target}`,
    ...(await conformOn({ address: options.target }, cfg, options)),
  };
}
