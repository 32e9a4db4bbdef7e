// How a spec file selects the Kafka transaction model. docs/reference/spec-format.md documents every field.
import type { Fields } from '../../checker/engine/input.ts';
import type { ModelEntry } from '../registry.ts';
import { defaultClientHandlers, defaultHandlers } from '../../model/kafka/handlers.ts';
import { loadOverrides } from './overrides.ts';
import { kafkaModel } from '../../model/kafka/index.ts';
import { kafkaCanonical, kafkaPackCanonical } from '../../model/kafka/symmetry.ts';
import type {
  AfterAbort,
  App,
  ClientHandlers,
  CoordinatorAppends,
  CoordinatorLoading,
  InstanceStart,
  KafkaConfig,
  RequestHandlers,
  Rules,
} from '../../model/kafka/config.ts';
import {
  generationNames,
  generations,
  mutantNames,
  switchDescriptions,
  switchNames,
  withClient,
} from '../../model/kafka/variants.ts';
import { type FaultBudget, KAFKA_MAX_EPOCH } from '../../model/kafka/state.ts';
import { kafkaLiveness } from '../../model/kafka/liveness.ts';
import { kafkaProperties, readCommittedIsolationOnLogs } from '../../model/kafka/properties.ts';
import { kafkaRenderer } from '../../model/kafka/render/index.ts';

const apps: readonly App[] = ['produce', 'consume-transform-produce'];
const afterAborts: readonly AfterAbort[] = ['rewind-committed', 'rewind-memory', 'keep-position'];
const instanceStarts: readonly InstanceStart[] = ['anytime', 'after-crash'];
const coordinatorAppendModes: readonly CoordinatorAppends[] = ['atomic', 'async'];
const coordinatorLoadingModes: readonly CoordinatorLoading[] = ['atomic', 'async'];
const faultKinds: readonly (keyof FaultBudget)[] = [
  'requestLoss',
  'responseLoss',
  'requestTimeouts',
  'batchExpiries',
  'producerCrashes',
  'coordinatorFailovers',
  'transactionTimeouts',
  'appendFailures',
  'markerTimeouts',
  'transactionalIdExpiries',
  'producerStateExpiries',
  'transactionVersionChanges',
];

interface Variant {
  readonly name: string;
  readonly rules: Rules;
  readonly handlers: RequestHandlers;
  readonly clientHandlers: ClientHandlers;
}

/**
 * "variant": a generation name, or { "base": generation, "enable": [switch...],
 * "disable": [switch...], "overrides": "file.ts" }.
 */
function readVariant(fields: Fields): Variant {
  if (!fields.has('variant') || typeof fields.raw('variant') === 'string') {
    const base = fields.oneOf('variant', generationNames, 'kafka-3.5');
    return {
      name: base,
      rules: generations[base]!.rules,
      handlers: defaultHandlers,
      clientHandlers: defaultClientHandlers,
    };
  }
  const v = fields.object('variant')!;
  const base = v.oneOf('base', generationNames, 'kafka-3.5');
  const enable = v.stringList('enable', switchNames, []);
  const disable = v.stringList('disable', switchNames, []);
  const { handlers, clientHandlers } = v.has('overrides')
    ? loadOverrides(v, 'overrides')
    : { handlers: defaultHandlers, clientHandlers: defaultClientHandlers };
  v.done();
  const both = enable.find((n) => disable.includes(n));
  if (both !== undefined) v.fail('disable', `no switch that is also enabled`, both);
  const rules: Record<string, boolean> = { ...generations[base]!.rules };
  for (const n of enable) rules[n] = true;
  for (const n of disable) rules[n] = false;
  const changes = [...enable.map((n) => `+${n}`), ...disable.map((n) => `-${n}`)];
  if (v.has('overrides')) changes.push(`+${v.raw('overrides')}`);
  return {
    name: changes.length === 0 ? base : `${base}${changes.join('')}`,
    rules: rules as unknown as Rules,
    handlers,
    clientHandlers,
  };
}

/**
 * "client": the generation of the producers' Java client when it is not the brokers', or one per
 * instance of a transactional.id (instance k of every transactional.id runs client k).
 */
function readClients(fields: Fields, instances: number): readonly string[] | undefined {
  if (!fields.has('client')) return undefined;
  const raw = fields.raw('client');
  if (!Array.isArray(raw))
    return Array.from({ length: instances }, () => fields.oneOf('client', generationNames));
  const expected = `a generation name, or a list of ${instances} (one per instance, instancesPerId)`;
  if (raw.length !== instances) fields.fail('client', expected, raw);
  raw.forEach((name, k) => {
    if (typeof name !== 'string' || !generationNames.includes(name))
      fields.fail(`client[${k}]`, `one of ${generationNames.join(', ')}`, name);
  });
  return raw as string[];
}

/** "transactionVersion": the finalized transaction.version at the start, 2 only on brokers that have it. */
function readTransactionVersion(fields: Fields, brokers: Rules): number {
  const level = fields.int('transactionVersion', 1, 2, brokers.tv2 ? 2 : 1);
  if (level === 2 && !brokers.tv2)
    fields.fail(
      'transactionVersion',
      '1 on brokers without transaction version 2 (a generation before kafka-4.0)',
      level,
    );
  return level;
}

function clientsName(clients: readonly string[]): string {
  return new Set(clients).size === 1 ? ` with client ${clients[0]}` : ` with clients ${clients.join(', ')}`;
}

export const kafkaEntry: ModelEntry<KafkaConfig> = {
  name: 'kafka',
  description:
    "Apache Kafka's transaction protocol: producers, transaction coordinator, partition leaders, consumers",
  properties: kafkaProperties.map(({ name, description, stable }) => ({ name, description, stable })),
  liveness: kafkaLiveness,

  readParams(fields) {
    const variant = readVariant(fields);
    const app = fields.oneOf('app', apps, 'produce');
    const afterAbort = fields.oneOf('afterAbort', afterAborts, 'rewind-committed');
    if (afterAbort !== 'rewind-committed' && app !== 'consume-transform-produce')
      fields.fail(
        'afterAbort',
        '"rewind-committed" (or no field) unless app is "consume-transform-produce"',
        afterAbort,
      );
    const consumersFields = fields.object('consumers');
    const consumers = {
      readCommitted: consumersFields?.int('readCommitted', 0, 2, 1) ?? 1,
      readUncommitted: consumersFields?.int('readUncommitted', 0, 2, 0) ?? 0,
    };
    consumersFields?.done();
    const observers = fields.oneOf('observers', ['modelled', 'off'], 'modelled');
    if (observers === 'off' && variant.rules.mutantReadPastLso)
      fields.fail(
        'observers',
        '"modelled" with mutantReadPastLso (the mutant breaks a consumer, and "off" models none)',
        observers,
      );
    const faultFields = fields.object('faults');
    const faults = Object.fromEntries(
      faultKinds.map((k) => [k, faultFields?.int(k, 0, 3, 0) ?? 0]),
    ) as unknown as FaultBudget;
    faultFields?.done();
    // Appends are asynchronous when asked for, or when some may fail (a failure needs the window).
    const coordinatorAppends = fields.oneOf(
      'coordinatorAppends',
      coordinatorAppendModes,
      faults.appendFailures > 0 ? 'async' : 'atomic',
    );
    if (coordinatorAppends === 'atomic' && faults.appendFailures > 0)
      fields.fail(
        'coordinatorAppends',
        '"async" (or no field) when faults.appendFailures is above 0',
        coordinatorAppends,
      );
    const instancesPerId = fields.int('instancesPerId', 1, 3, 1);
    const clients = readClients(fields, instancesPerId);
    const config: KafkaConfig = {
      variant: clients === undefined ? variant.name : `${variant.name}${clientsName(clients)}`,
      rules: variant.rules,
      clientRules: Array.from({ length: instancesPerId }, (_, k) =>
        clients === undefined ? variant.rules : withClient(variant.rules, generations[clients[k]!]!.rules),
      ),
      transactionalIds: fields.int('transactionalIds', 0, 3, 1),
      instancesPerId,
      idempotentProducers: fields.int('idempotentProducers', 0, 3, 0),
      recordsPerIdempotentProducer: fields.int('recordsPerIdempotentProducer', 1, 4, 2),
      idempotentClientRules:
        clients === undefined || new Set(clients).size > 1 ? variant.rules : generations[clients[0]!]!.rules,
      instanceStart: fields.oneOf('instanceStart', instanceStarts, 'anytime'),
      partitions: fields.int('partitions', 1, 4, 1),
      transactionsPerInstance: fields.int('transactionsPerInstance', 1, 3, 1),
      recordsPerTransaction: fields.int('recordsPerTransaction', 1, 3, 1),
      app,
      inputRecords: app === 'consume-transform-produce' ? fields.int('inputRecords', 1, 4, 2) : 0,
      afterAbort,
      consumers,
      ...(observers === 'off' ? { observers } : {}),
      faults,
      coordinatorAppends,
      coordinatorLoading: fields.oneOf('coordinatorLoading', coordinatorLoadingModes, 'atomic'),
      transactionVersion: readTransactionVersion(fields, variant.rules),
      maxEpoch: fields.int('maxEpoch', 1, KAFKA_MAX_EPOCH, KAFKA_MAX_EPOCH),
      handlers: variant.handlers,
      clientHandlers: variant.clientHandlers,
    };
    if (config.transactionalIds === 0 && config.idempotentProducers === 0)
      fields.fail(
        'transactionalIds',
        'at least 1 when there is no idempotent producer (idempotentProducers)',
        0,
      );
    if (config.transactionalIds === 0 && app === 'consume-transform-produce')
      fields.fail('transactionalIds', 'at least 1 with the consume-transform-produce app', 0);
    return config;
  },

  variants: generationNames.map((name) => ({ name, description: generations[name]!.description })),
  switches: switchNames
    .filter((n) => !mutantNames.includes(n))
    .map((name) => ({ name, description: switchDescriptions[name] })),
  mutants: mutantNames.map((name) => ({ name, description: switchDescriptions[name] })),

  withVariant(spec, base) {
    const variant = spec.variant;
    return {
      ...spec,
      variant: typeof variant === 'object' && variant !== null ? { ...variant, base } : base,
    };
  },

  withMutant(spec, mutant) {
    const variant = spec.variant;
    if (typeof variant !== 'object' || variant === null)
      return { ...spec, variant: { base: variant ?? 'kafka-3.5', enable: [mutant] } };
    const enable = (variant as { enable?: unknown }).enable;
    return { ...spec, variant: { ...variant, enable: [...(Array.isArray(enable) ? enable : []), mutant] } };
  },

  filesRead(spec) {
    const overrides = (spec.variant as { overrides?: unknown } | undefined)?.overrides;
    return typeof overrides === 'string' ? [overrides] : [];
  },

  build(config, properties) {
    // With observers off, a read_committed consumer's view is read off the logs.
    const onLogs = config.observers === 'off' && config.consumers.readCommitted > 0;
    return kafkaModel(
      config,
      kafkaProperties
        .filter((p) => properties.includes(p.name))
        .map((p) =>
          onLogs && p.name === readCommittedIsolationOnLogs.name ? readCommittedIsolationOnLogs : p,
        ),
    ) as never;
  },

  render: kafkaRenderer,

  // The data partitions are interchangeable (__consumer_offsets is not renamed), and so are the
  // instances of an id once all have started: only their starts' transition classes differ
  // (footprints.ts), and a start is never enabled again.
  canonical: (config) => kafkaCanonical(config) as (s: never) => unknown,
  packCanonical: (config) => kafkaPackCanonical(config) as (s: never, words: Int32Array) => number,
};
