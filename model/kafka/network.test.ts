// The network and its faults: channels are FIFO, kept sorted and never empty; an answer to a
// closed connection is lost; a loss takes a channel's head and spends the budget of its kind.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canLose, lose } from './faults.ts';
import { connSlot, hasMessage, removeHead, reply, request, response, send } from './network.ts';
import { type Channel, type Message, Api, IDEMPOTENT_BASE, LEADER_BASE, TC_NODE } from './state.ts';
import { initial, kafkaConfig, withProducer } from './conformance/harness.ts';

const message = (seq: number): Message => request(Api.Produce, { seq });
const node = fc.constantFrom(0, 1, TC_NODE, LEADER_BASE, LEADER_BASE + 1);
const sends = fc.array(fc.record({ from: node, to: node, conn: fc.integer({ min: 0, max: 2 }) }), {
  maxLength: 30,
});

const key = (c: Channel): [number, number, number] => [c.from, c.to, c.conn];
const ordered = (a: Channel, b: Channel): boolean => {
  const [x, y] = [key(a), key(b)];
  return x[0] < y[0] || (x[0] === y[0] && (x[1] < y[1] || (x[1] === y[1] && x[2] < y[2])));
};

describe('channels', () => {
  it('stay sorted by (from, to, connection), one per connection direction, in send order inside', () => {
    fc.assert(
      fc.property(sends, (list) => {
        let network: readonly Channel[] = [];
        list.forEach((s, i) => (network = send(network, s.from, s.to, s.conn, message(i))));
        for (let i = 1; i < network.length; i++) expect(ordered(network[i - 1]!, network[i]!)).toBe(true);
        for (const c of network) {
          const sent = list.flatMap((s, i) =>
            s.from === c.from && s.to === c.to && s.conn === c.conn ? [i] : [],
          );
          expect(c.messages.map((m) => (m as { seq: number }).seq)).toEqual(sent);
        }
        expect(network.reduce((n, c) => n + c.messages.length, 0)).toBe(list.length);
      }),
    );
  });

  it('lose their head first, and disappear when emptied', () => {
    fc.assert(
      fc.property(sends, fc.nat(), (list, pick) => {
        let network: readonly Channel[] = [];
        list.forEach((s, i) => (network = send(network, s.from, s.to, s.conn, message(i))));
        if (network.length === 0) return;
        const index = pick % network.length;
        const before = network[index]!;
        const after = removeHead(network, index);
        const same = after.find(
          (c) => c.from === before.from && c.to === before.to && c.conn === before.conn,
        );
        expect(same?.messages ?? []).toEqual(before.messages.slice(1));
        expect(after.every((c) => c.messages.length > 0)).toBe(true);
        expect(after.length).toBe(before.messages.length === 1 ? network.length - 1 : network.length);
      }),
    );
  });

  it('hasMessage finds a message by its channel and content', () => {
    const network = send(send([], 0, TC_NODE, 0, message(7)), 0, LEADER_BASE, 1, message(8));
    expect(hasMessage(network, (c, m) => c.to === LEADER_BASE && (m as { seq: number }).seq === 8)).toBe(
      true,
    );
    expect(hasMessage(network, (c, m) => c.to === TC_NODE && (m as { seq: number }).seq === 8)).toBe(false);
  });
});

describe('answers', () => {
  const cfg = kafkaConfig('kafka-3.5');

  it('go back on the connection the request came in on', () => {
    const s = reply(initial(cfg), { from: 0, to: TC_NODE, conn: 0 }, response(Api.InitProducerId, {}));
    expect(s.network).toEqual([
      { from: TC_NODE, to: 0, conn: 0, messages: [response(Api.InitProducerId, {})] },
    ]);
  });

  it('to a connection the client has since closed are lost with it', () => {
    const reconnected = withProducer(initial(cfg), 0, {
      conns: initial(cfg).producers[0]!.conns.map((c, slot) => (slot === connSlot(LEADER_BASE) ? c + 1 : c)),
    });
    expect(
      reply(reconnected, { from: 0, to: LEADER_BASE, conn: 0 }, response(Api.Produce, {})).network,
    ).toEqual([]);
    expect(
      reply(reconnected, { from: 0, to: LEADER_BASE, conn: 1 }, response(Api.Produce, {})).network,
    ).toHaveLength(1);
    // The coordinator's own connections are not a producer's: their answers always go.
    expect(
      reply(reconnected, { from: TC_NODE, to: LEADER_BASE, conn: 5 }, response(Api.WriteTxnMarkers, {}))
        .network,
    ).toHaveLength(1);
  });

  it('to an idempotent producer on a connection it has since closed to that leader are lost too', () => {
    const idempotent = kafkaConfig('kafka-3.5', {
      transactionalIds: 0,
      idempotentProducers: 1,
      partitions: 2,
    });
    const s = initial(idempotent);
    const reconnected = { ...s, idempotentProducers: [{ ...s.idempotentProducers[0]!, conns: [1, 0] }] };
    const answer = (to: number, conn: number) =>
      reply(reconnected, { from: IDEMPOTENT_BASE, to, conn }, response(Api.Produce, {})).network;
    expect(answer(LEADER_BASE, 0)).toEqual([]);
    expect(answer(LEADER_BASE, 1)).toEqual([
      { from: LEADER_BASE, to: IDEMPOTENT_BASE, conn: 1, messages: [response(Api.Produce, {})] },
    ]);
    expect(answer(LEADER_BASE + 1, 0)).toHaveLength(1);
  });

  it('name the client slot of each node: the coordinator first, then each leader', () => {
    expect([connSlot(TC_NODE), connSlot(LEADER_BASE), connSlot(LEADER_BASE + 2)]).toEqual([0, 1, 3]);
  });
});

describe('message loss', () => {
  const budget = (requestLoss: number, responseLoss: number) => ({
    ...kafkaConfig('kafka-3.5').faults,
    requestLoss,
    responseLoss,
  });

  it('takes the head of a channel and spends the budget of its kind, request or response', () => {
    const base = initial(kafkaConfig('kafka-3.5'));
    const network = send(send([], 0, TC_NODE, 0, message(1)), 0, TC_NODE, 0, message(2));
    const s = { ...base, network, faults: budget(1, 0) };
    expect(canLose(s, 0)).toBe(true);
    const lost = lose(s, 0);
    expect(lost.network[0]!.messages).toEqual([message(2)]);
    expect(lost.faults).toMatchObject({ requestLoss: 0, responseLoss: 0 });
    expect(canLose(lost, 0)).toBe(false);
    const answers = {
      ...base,
      network: send([], TC_NODE, 0, 0, response(Api.EndTxn, {})),
      faults: budget(1, 0),
    };
    expect(canLose(answers, 0)).toBe(false);
    expect(lose({ ...answers, faults: budget(0, 2) }, 0).faults).toMatchObject({
      requestLoss: 0,
      responseLoss: 1,
    });
  });
});
