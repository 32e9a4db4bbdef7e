// Faults, each spending the spec's budget for its kind: message loss, request timeouts, producer
// crashes, coordinator failover and transaction timeouts. Loss takes a channel's head: losing a
// message further back is the same as losing it once it reaches the head, since nothing reads it
// in between.
import { removeHead } from './network.ts';
import { type FaultBudget, type Message, type State, withField } from './state.ts';

export function spend(s: State, kind: keyof FaultBudget): State {
  return withField(s, 'faults', { ...s.faults, [kind]: s.faults[kind] - 1 });
}

export function lossBudget(m: Message): keyof FaultBudget {
  return m.response ? 'responseLoss' : 'requestLoss';
}

export function canLose(s: State, channel: number): boolean {
  const head = s.network[channel]!.messages[0]!;
  return s.faults[lossBudget(head)] > 0;
}

export function lose(s: State, channel: number): State {
  const head = s.network[channel]!.messages[0]!;
  return spend(withField(s, 'network', removeHead(s.network, channel)), lossBudget(head));
}
