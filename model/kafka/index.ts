// kafkaModel(config): the Kafka transaction protocol as a Model for the engine.
import type { Model, Property } from '../../checker/engine/model.ts';
import { type KafkaConfig, modelledConsumers } from './config.ts';
import { initialConsumer } from './consumer.ts';
import { emptyCoordinator } from './coordinator.ts';
import { kafkaIndependence } from './footprints.ts';
import { type Action, actionKindNames, actionLabel } from './labels.ts';
import { enabledActions, step } from './next.ts';
import { initialIdempotentProducer } from './idempotent.ts';
import { fingerprintState, packState, unpackState } from './pack.ts';
import { emptyPartition } from './partition.ts';
import { initialProducer } from './producer.ts';
import { stateComponents } from './components.ts';
import { kafkaView } from './view.ts';
import { type State, Decision, Told } from './state.ts';

export type { KafkaConfig, Rules } from './config.ts';
export type { Action } from './labels.ts';
export type { State } from './state.ts';

export function initialState(cfg: KafkaConfig): State {
  const producers = [];
  for (let t = 0; t < cfg.transactionalIds; t++) {
    for (let k = 0; k < cfg.instancesPerId; k++) producers.push(initialProducer(cfg, t, k));
  }
  const { readCommitted, readUncommitted } = modelledConsumers(cfg);
  const consumers = [
    ...Array.from({ length: readCommitted }, () => initialConsumer(true, cfg.partitions)),
    ...Array.from({ length: readUncommitted }, () => initialConsumer(false, cfg.partitions)),
  ];
  const clientTxns = producers.length * cfg.transactionsPerInstance;
  const transform = cfg.app === 'consume-transform-produce';
  return {
    transactionVersion: cfg.transactionVersion,
    producers,
    idempotentProducers: Array.from({ length: cfg.idempotentProducers }, () =>
      initialIdempotentProducer(cfg.partitions),
    ),
    group: transform ? { generation: 0 } : null,
    coordinator: emptyCoordinator(cfg.transactionalIds, cfg.partitions + (transform ? 1 : 0)),
    // The transform app's __consumer_offsets partition follows the data partitions.
    partitions: Array.from({ length: cfg.partitions + (transform ? 1 : 0) }, emptyPartition),
    consumers,
    network: [],
    faults: cfg.faults,
    history: Array.from({ length: clientTxns }, () => ({
      decision: Decision.None,
      told: Told.Nothing,
      recordsSent: 0,
      prepared: false,
      fenced: false,
      expired: false,
    })),
  };
}

export function kafkaModel(cfg: KafkaConfig, invariants: readonly Property<State>[]): Model<State, Action> {
  return {
    init: () => [initialState(cfg)],
    actions: (s) => enabledActions(cfg, s),
    next: (s, a) => step(cfg, s, a),
    label: (a) => actionLabel(cfg, a),
    kind: (a) => actionKindNames[a.kind]!,
    actionKinds: actionKindNames,
    invariants,
    view: (s) => kafkaView(cfg, s),
    components: (s) => stateComponents(cfg, s),
    pack: packState,
    fingerprint: fingerprintState,
    unpack: unpackState,
    // A stable invariant makes no step visible (Property.stable).
    independence: kafkaIndependence(
      cfg,
      invariants.filter((p) => p.stable !== true).map((p) => p.name),
    ),
  };
}
