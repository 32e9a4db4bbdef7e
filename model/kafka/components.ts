// The parts of a Kafka state, named as the protocol's actors, for the state profile: each
// producer, the coordinator, each partition leader, each consumer, each channel, the ghost
// history and the fault budgets.
import type { KafkaConfig } from './config.ts';
import { idempotentName, nodeName, producerName } from './labels.ts';
import { LEADER_BASE, type State } from './state.ts';

export function stateComponents(cfg: KafkaConfig, s: State): Record<string, unknown> {
  const out: Record<string, unknown> = { transactionVersion: s.transactionVersion };
  s.producers.forEach((p, i) => (out[`producer ${producerName(cfg, i)}`] = p));
  s.idempotentProducers.forEach((p, j) => (out[`producer ${idempotentName(j)}`] = p));
  out.coordinator = s.coordinator;
  if (s.group !== null) out.group = s.group;
  s.partitions.forEach((p, i) => (out[`leader ${nodeName(cfg, LEADER_BASE + i)}`] = p));
  s.consumers.forEach((c, i) => (out[`consumer C${i}`] = c));
  // A channel is named by its ends and connection; an empty one is absent from the state.
  for (const ch of s.network)
    out[`channel ${nodeName(cfg, ch.from)}→${nodeName(cfg, ch.to)}#${ch.conn}`] = ch.messages;
  out.history = s.history;
  out.faults = s.faults;
  return out;
}
