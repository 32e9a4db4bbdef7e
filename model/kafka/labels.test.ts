// The label grammar: one label of every kind, as saved traces hold it, written from its action and
// read back as its step; steps of every kind drawn at random from the grammar read back as
// themselves; a text that is not a label is refused with what was expected; and labels name nodes
// and connections the way traces and the conformance cases read them. labels-walks.test.ts reads
// back the labels of every action enabled on walks of the shipped specs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Action,
  type Domain,
  type Node,
  type Role,
  type Step,
  ActionKind,
  actionForms,
  actionKindNames,
  actionLabel,
  isLabelError,
  labelOf,
  parseLabel,
  stepOf,
} from './labels.ts';
import { send } from './network.ts';
import { VERIFICATION_CONN } from './partition.ts';
import { Api, IDEMPOTENT_BASE, LEADER_BASE, TC_NODE, TxnState } from './state.ts';
import { P0 } from './conformance/client-support.ts';
import {
  TC,
  handle,
  initial,
  kafkaConfig,
  labels,
  leader,
  request,
  response,
  withTxn,
} from './conformance/harness.ts';

/** One label of each kind, as saved traces hold them: their text is the replay key and never changes. */
const examples: readonly (readonly [string, Partial<Action>])[] = [
  ['P1.1: initTransactions', { kind: ActionKind.initTransactions, actor: 3 }],
  ['P0.0: fetchOffsets', { kind: ActionKind.fetchOffsets }],
  ['P0.1: beginTransaction', { kind: ActionKind.beginTransaction, actor: 1 }],
  ['P0.1: send(p1)', { kind: ActionKind.send, actor: 1, target: 1 }],
  ['P0.0: sendOffsetsToTransaction', { kind: ActionKind.sendOffsetsToTransaction }],
  ['P0.0: commitTransaction', { kind: ActionKind.commitTransaction }],
  ['P0.0: abortTransaction', { kind: ActionKind.abortTransaction }],
  ['P0.0: sendTxnRequest', { kind: ActionKind.sendTxnRequest }],
  ['P1.0: sendProduce(p0)', { kind: ActionKind.sendProduce, actor: 2 }],
  [
    'deliver P0.0→TC#2: InitProducerId',
    { kind: ActionKind.deliver, target: TC_NODE, conn: 2, api: Api.InitProducerId },
  ],
  [
    'lose TC→P0.1: AddPartitionsToTxn response',
    { kind: ActionKind.lose, actor: TC_NODE, target: 1, api: Api.AddPartitionsToTxn },
  ],
  ['P0.0: requestTimeout(EndTxn)', { kind: ActionKind.requestTimeout, api: Api.EndTxn }],
  ['P0.0: produceTimeout(p1)', { kind: ActionKind.produceTimeout, target: 1 }],
  ['P0.0: batchExpired(p0)', { kind: ActionKind.batchExpired }],
  ['P0.0: crash', { kind: ActionKind.crash }],
  ['TC: transactionTimeout(t1)', { kind: ActionKind.transactionTimeout, actor: 1 }],
  ['TC: coordinatorFailover', { kind: ActionKind.coordinatorFailover }],
  [
    'TC: coordinatorFailover(t0 kept, t1 lost)',
    { kind: ActionKind.coordinatorFailover, target: 0b01, conn: 0b10 },
  ],
  ['TC: resendTxnMarker(t1, p0)', { kind: ActionKind.resendTxnMarker, actor: 1 }],
  ['TC: completeTransaction(t0)', { kind: ActionKind.completeTransaction }],
  ['C1: fetch(p1)', { kind: ActionKind.fetch, actor: 1, target: 1 }],
  [
    'GC: verificationTimeout(attempt 1, seq 4)',
    { kind: ActionKind.verificationTimeout, actor: 2, target: 1, conn: 4 },
  ],
  ['TC: completeAppend(t1)', { kind: ActionKind.completeAppend, actor: 1 }],
  ['TC: failAppend(t0)', { kind: ActionKind.failAppend }],
  ['TC: markerTimeout(L1)', { kind: ActionKind.markerTimeout, target: 1 }],
  ['TC: transactionalIdExpiry(t0)', { kind: ActionKind.transactionalIdExpiry }],
  ['L0: producerStateExpiry(pid 5)', { kind: ActionKind.producerStateExpiry, target: 5 }],
  ['TC: loadTransactions', { kind: ActionKind.loadTransactions }],
  ['TC: finalizeTransactionVersion(2)', { kind: ActionKind.finalizeTransactionVersion, target: 2 }],
  ['I1: initProducerId', { kind: ActionKind.idempotentInitProducerId, actor: 1 }],
  ['I0: send(p1)', { kind: ActionKind.idempotentSend, target: 1 }],
  ['I0: sendProduce(p0)', { kind: ActionKind.idempotentSendProduce }],
  ['I0: produceTimeout(p0)', { kind: ActionKind.idempotentProduceTimeout }],
  ['I1: batchExpired(p1)', { kind: ActionKind.idempotentBatchExpired, actor: 1, target: 1 }],
];

describe('one label of each kind', () => {
  // Two transactional.ids of two instances each, two data partitions and __consumer_offsets.
  const cfg = kafkaConfig('kafka-3.8', {
    app: 'consume-transform-produce',
    inputRecords: 1,
    transactionalIds: 2,
    instancesPerId: 2,
    partitions: 2,
  });

  it.each(examples)('%s', (label, fields) => {
    const action: Action = {
      kind: ActionKind.initTransactions,
      actor: 0,
      target: 0,
      conn: 0,
      api: 0,
      ...fields,
    };
    expect(actionLabel(cfg, action)).toBe(label);
    expect(parseLabel(label)).toEqual(stepOf(cfg, action));
  });

  it('covers every kind', () => {
    const kinds = new Set(examples.map(([, a]) => a.kind));
    expect(actionKindNames.filter((_, kind) => !kinds.has(kind as ActionKind))).toEqual([]);
  });
});

const index = fc.nat({ max: 12 });
const nodes: Readonly<Record<Role, fc.Arbitrary<Node>>> = {
  producer: fc.record({ role: fc.constant('producer'), transactionalId: index, instance: index }),
  idempotentProducer: fc.record({ role: fc.constant('idempotentProducer'), index }),
  coordinator: fc.constant({ role: 'coordinator' }),
  leader: fc.record({ role: fc.constant('leader'), partition: index }),
  groupCoordinator: fc.constant({ role: 'groupCoordinator' }),
  consumer: fc.record({ role: fc.constant('consumer'), index }),
};
const anyNode = fc.oneof(...Object.values(nodes));
const apiNames = fc.constantFrom(...Object.keys(Api));
const values: Readonly<Record<Domain, fc.Arbitrary<unknown>>> = {
  partition: index,
  transactionalId: index,
  integer: fc.integer({ min: -3, max: 40 }),
  api: apiNames,
  leader: fc.oneof(nodes.leader, nodes.groupCoordinator),
  appends: fc.array(fc.record({ transactionalId: index, kept: fc.boolean() }), { maxLength: 4 }),
};

/** Any step of a kind, drawn from its form in the grammar. */
function stepsOf([kind, form]: (typeof actionForms)[number]): fc.Arbitrary<Step> {
  const drawn =
    form.shape === 'channel'
      ? fc.record({
          kind: fc.constant(kind),
          from: anyNode,
          to: anyNode,
          connection: fc.oneof(
            fc.constant(0),
            fc.constant(VERIFICATION_CONN),
            fc.integer({ min: 1, max: 9 }),
          ),
          api: apiNames,
        })
      : fc.record({
          kind: fc.constant(kind),
          actor: fc.oneof(...form.actor.roles.map((role) => nodes[role])),
          ...Object.fromEntries(
            Object.entries(form.args as Readonly<Record<string, { domain: Domain }>>).map(([name, arg]) => [
              name,
              values[arg.domain],
            ]),
          ),
        });
  return drawn as fc.Arbitrary<Step>;
}

describe('labels of steps drawn from the grammar', () => {
  it('read back as the step, of every kind', () => {
    const kinds = new Set<string>();
    fc.assert(
      fc.property(fc.oneof(...actionForms.map(stepsOf)), (step) => {
        kinds.add(step.kind);
        expect(parseLabel(labelOf(step))).toEqual(step);
      }),
      { numRuns: 3000 },
    );
    expect(actionKindNames.filter((kind) => !kinds.has(kind))).toEqual([]);
  });
});

describe('a text that is not a label', () => {
  const error = (text: string): string => {
    const parsed = parseLabel(text);
    return isLabelError(parsed) ? parsed.error : `read as ${JSON.stringify(parsed)}`;
  };

  it('names what was expected where it went wrong', () => {
    expect(error('hello')).toBe(
      'label "hello": expected "<actor>: <action>(<arguments>)" or "deliver|lose <from>→<to>: <API>"',
    );
    expect(error('X1: crash')).toBe(
      'label "X1: crash": expected an actor (TC, GC, P<t>.<i>, I<j>, L<p> or C<c>) before ": "',
    );
    expect(error('C0: commitTransaction')).toBe(
      'label "C0: commitTransaction": expected an action of C0 (fetch)',
    );
    expect(error('P0.0: send')).toBe('label "P0.0: send": expected send(p<partition>)');
    expect(error('P0.0: crash(p0)')).toBe('label "P0.0: crash(p0)": expected crash without arguments');
    expect(error('TC: resendTxnMarker(t0)')).toBe(
      'label "TC: resendTxnMarker(t0)": expected resendTxnMarker(t<transactional.id>, p<partition>)',
    );
    expect(error('TC: coordinatorFailover(t0 gone)')).toContain(
      'expected coordinatorFailover(t<transactional.id> kept|lost, ...)',
    );
    expect(error('deliver P0.0→Q0: Produce')).toContain(
      'expected a node (TC, GC, P<t>.<i>, I<j>, L<p> or C<c>)',
    );
    expect(error('deliver P0.0→L0: Fetch')).toContain(
      'expected an API name after ": " (Produce, OffsetFetch',
    );
    expect(error('deliver P0.0→L0: Produce response')).toBe(
      'label "deliver P0.0→L0: Produce response": expected "Produce" on P0.0→L0',
    );
    expect(error('lose L0→P0.0: Produce')).toBe(
      'label "lose L0→P0.0: Produce": expected "Produce response" on L0→P0.0',
    );
  });

  it('is refused when it is not written the one way labels write it', () => {
    for (const text of [
      'P00.0: crash',
      'P0.0: send(p01)',
      'P0.0: send(p-1)',
      'deliver P0.0→L0#0: Produce',
      'TC: finalizeTransactionVersion(+2)',
      'TC: coordinatorFailover()',
      'L0: verificationTimeout(attempt 0,seq 1)',
    ])
      expect(isLabelError(parseLabel(text)), text).toBe(true);
  });
});

describe('labels name nodes and connections', () => {
  const cfg = kafkaConfig('kafka-3.8', { app: 'consume-transform-produce', inputRecords: 1 });
  const deliver = (from: number, to: number, conn: number, api: Api): string =>
    actionLabel(cfg, { kind: ActionKind.deliver, actor: from, target: to, conn, api });

  it('an idempotent producer is I and its number', () => {
    const idempotent = kafkaConfig('kafka-3.8', {
      transactionalIds: 0,
      idempotentProducers: 2,
      partitions: 1,
    });
    expect(labels(idempotent, initial(idempotent)).filter((l) => l.includes('initProducerId'))).toEqual([
      'I0: initProducerId',
      'I1: initProducerId',
    ]);
    const answered = {
      ...initial(idempotent),
      network: send([], leader(0), IDEMPOTENT_BASE + 1, 0, response(Api.Produce, {})),
    };
    expect(labels(idempotent, answered)).toContain('deliver L0→I1: Produce response');
  });

  it('a failover names each append in flight, kept or lost, in transactional.id order', () => {
    const two = kafkaConfig('kafka-3.8', {
      transactionalIds: 2,
      coordinatorAppends: 'async',
      faults: { ...kafkaConfig('kafka-3.8').faults, coordinatorFailovers: 1 },
    });
    let s = withTxn(withTxn(initial(two), 0, { pid: 10, epoch: 1, state: TxnState.Empty }), 1, {
      pid: 11,
      epoch: 1,
      state: TxnState.Empty,
    });
    for (const t of [0, 1])
      s = handle(
        two,
        s,
        t,
        TC,
        request(Api.AddPartitionsToTxn, { txnId: t, pid: 10 + t, epoch: 1, partitions: 1 }),
      );
    expect(labels(two, s).filter((l) => l.startsWith('TC: coordinatorFailover'))).toContain(
      'TC: coordinatorFailover(t0 kept, t1 lost)',
    );
  });

  it('the leader of the offsets partition is the group coordinator, GC', () => {
    expect(deliver(P0, LEADER_BASE + cfg.partitions, 0, Api.TxnOffsetCommit)).toBe(
      'deliver P0.0→GC: TxnOffsetCommit',
    );
    expect(deliver(P0, leader(1), 0, Api.Produce)).toBe('deliver P0.0→L1: Produce');
  });

  it('a connection other than the first is named by its number; the verification connection by its role', () => {
    expect(deliver(P0, leader(0), 2, Api.Produce)).toBe('deliver P0.0→L0#2: Produce');
    expect(deliver(leader(0), TC_NODE, VERIFICATION_CONN, Api.AddPartitionsToTxn)).toBe(
      'deliver L0→TC (verification): AddPartitionsToTxn',
    );
    expect(deliver(TC_NODE, leader(0), VERIFICATION_CONN, Api.AddPartitionsToTxn)).toBe(
      'deliver TC→L0 (verification): AddPartitionsToTxn response',
    );
  });

  it('markers go from the coordinator to a leader, their answers back', () => {
    expect(deliver(TC_NODE, leader(0), 1, Api.WriteTxnMarkers)).toBe('deliver TC→L0#1: WriteTxnMarkers');
    expect(deliver(leader(0), TC_NODE, 1, Api.WriteTxnMarkers)).toBe(
      'deliver L0→TC#1: WriteTxnMarkers response',
    );
  });

  it("a leader's own steps name the leader of the partition", () => {
    const label = (kind: ActionKind, actor: number, target: number, conn = 0): string =>
      actionLabel(cfg, { kind, actor, target, conn, api: 0 });
    expect(label(ActionKind.markerTimeout, 0, 1)).toBe('TC: markerTimeout(L1)');
    expect(label(ActionKind.verificationTimeout, 1, 0, 3)).toBe('L1: verificationTimeout(attempt 0, seq 3)');
    expect(label(ActionKind.producerStateExpiry, 1, 5)).toBe('L1: producerStateExpiry(pid 5)');
  });
});
