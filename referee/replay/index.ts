// `txcheck replay --kafka TARGET`: a Kafka trace against a broker at HOST:PORT, or against a
// release (a version, e.g. 4.1.1) that the project's own script starts on 127.0.0.1 for the
// replay and stops after it; `--kafka-cluster RELEASE`: against a three-node cluster of that
// release whose network the replay holds.
import type { KafkaConfig } from '../../model/kafka/config.ts';
import { BrokerSetupError, startBroker } from '../broker.ts';
import { type Cluster, startCluster } from '../cluster.ts';
import { BrokerUnusableError, type ReplayOutcome, type StepResult, replayOnBroker } from './replay.ts';
import { type Referee, type Walk, walkTrace } from './walk.ts';
import { kafkaProperties } from '../../model/kafka/properties.ts';
import { generations } from '../../model/kafka/variants.ts';

export { BrokerUnusableError, type ReplayOutcome, type StepResult } from './replay.ts';
export { BrokerSetupError } from '../broker.ts';

export interface KafkaReplayOptions {
  /** HOST:PORT of a running broker, or a release to start. */
  readonly target: string;
  /** Start a three-node cluster of the release, behind the replay's proxies. */
  readonly cluster?: boolean;
  /** With a release: the transaction.version to finalize; the trace's own by default. */
  readonly tv?: number;
  /** The Kafka spec's parameters the trace was made with. */
  readonly params: unknown;
  readonly labels: readonly string[];
  /** The property the trace violates. */
  readonly property: string;
  readonly onStep?: (result: StepResult) => void;
  /** Asked before each step: true ends the replay there (a signal). */
  readonly shouldStop?: () => boolean;
}

/**
 * The trace's property at the end of the model's replay: violated still, no longer (the trace
 * needs the broker's work held back), not reached (the replay stopped), or not an invariant.
 */
export type Violation = 'shows' | 'gone' | 'not reached' | 'not checked';

export interface KafkaReplayResult extends ReplayOutcome {
  /** The transaction version the model's brokers run at (the broker's is `transactionVersion`). */
  readonly modelTransactionVersion: number;
  /** "Kafka 4.1.1" for a release the replay started, else the address. */
  readonly broker: string;
  readonly violation: Violation;
}

/**
 * A trace's raw spec at the broker's transaction version: a generation with transaction version 2
 * runs at the level the broker finalized (a 4.x broker at version 1 is such a generation at 1).
 */
export function atTransactionVersion(
  raw: Readonly<Record<string, unknown>>,
  tv: number,
): Readonly<Record<string, unknown>> {
  const variant = raw.variant;
  const base =
    typeof variant === 'object' && variant !== null ? (variant as { base?: unknown }).base : variant;
  const rules = generations[typeof base === 'string' ? base : 'kafka-3.5']?.rules;
  return rules?.tv2 === true ? { ...raw, transactionVersion: tv } : raw;
}

const RELEASE = /^\d+\.\d+\.\d+$/;
const ADDRESS = /^[^\s:]+:\d{1,5}$/;

/** The transaction.version the trace's brokers run at: 2 where its generation and feature allow. */
export function traceTransactionVersion(cfg: KafkaConfig): number {
  return cfg.rules.tv2 && cfg.transactionVersion === 2 ? 2 : 1;
}

export async function replayOnKafka(options: KafkaReplayOptions): Promise<KafkaReplayResult> {
  const cfg = options.params as KafkaConfig;
  const referee: Referee = options.cluster === true ? 'cluster' : 'broker';
  const walk = walkTrace(cfg, options.labels, referee);
  const { target, onStep, shouldStop } = options;
  const run = async (address: string, cluster?: Cluster): Promise<ReplayOutcome> => {
    const outcome = await replayOnBroker({
      address,
      cfg,
      steps: walk.steps,
      onStep,
      ...(shouldStop && { shouldStop }),
      ...(cluster && { cluster }),
    });
    const { stop } = walk;
    if (stop === undefined || outcome.status !== 'agrees') return outcome;
    return {
      ...outcome,
      status: 'unsupported',
      message: `agrees with Kafka on the first ${walk.steps.length} steps, then stops at step ${stop.index} (${stop.label}): ${stop.why}`,
    };
  };
  const result = async (): Promise<ReplayOutcome & { broker: string }> => {
    if (referee === 'cluster') {
      if (!RELEASE.test(target))
        throw new BrokerSetupError(`--kafka-cluster: expected a Kafka release such as 4.1.1, got ${target}`);
      const cluster = await startCluster({ version: target, tv: options.tv ?? traceTransactionVersion(cfg) });
      try {
        return { ...(await run(cluster.node(1).address, cluster)), broker: `a cluster of Kafka ${target}` };
      } finally {
        await cluster.stop();
      }
    }
    if (ADDRESS.test(target) && !RELEASE.test(target))
      return { ...(await run(target)), broker: `the broker at ${target}` };
    if (!RELEASE.test(target))
      throw new BrokerSetupError(
        `--kafka: expected HOST:PORT or a Kafka release such as 4.1.1, got ${target}`,
      );
    const broker = await startBroker({ version: target, tv: options.tv ?? traceTransactionVersion(cfg) });
    try {
      // A broker that dies closes the replay's connections: the replay then ends as broker-died.
      return { ...(await run(broker.address)), broker: `Kafka ${target}` };
    } finally {
      await broker.stop();
    }
  };
  return {
    ...(await result()),
    violation: violationAtEnd(cfg, walk, options.property),
    modelTransactionVersion: traceTransactionVersion(cfg),
  };
}

/**
 * Whether the trace's property is still violated where the model's replay ended: the broker's
 * own work done at once can take away an interleaving the trace needs.
 */
function violationAtEnd(cfg: KafkaConfig, walk: Walk, property: string): Violation {
  if (walk.stop !== undefined) return 'not reached';
  const invariant = kafkaProperties.find((p) => p.name === property);
  if (invariant === undefined) return 'not checked';
  return invariant.holds(walk.last) ? 'gone' : 'shows';
}

export function isSetupError(e: unknown): boolean {
  return e instanceof BrokerSetupError || e instanceof BrokerUnusableError;
}
