// A three-node cluster behind its proxies: a coordinator's WriteTxnMarkers held at the partition
// leader's proxy keeps the transaction in PrepareCommit until it is released, and the cluster
// leaves no process, port or directory behind.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  createReplicatedTopic,
  describePartition,
  electLeader,
  startCluster,
} from './cluster.ts';
import { Connection } from './driver/connection.ts';
import { fetchCommitted, findCoordinator, isNotYet, produceBatch, waitFor } from './driver/driver.ts';
import {
  DescribeProducers,
  DescribeTransactions,
  EndTxn,
  InitProducerId,
  WriteTxnMarkers,
} from './driver/messages.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function accepts(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host: host!, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const TXN_STATE = '__transaction_state';

/** A producer id at epoch 0 for a fresh transactional id, once its coordinator has loaded. */
async function initProducer(
  coordinator: Connection,
  transactionalId: string,
): Promise<{ producerId: number }> {
  const init = await waitFor(
    'InitProducerId',
    () =>
      coordinator.send(InitProducerId, {
        transactionalId,
        transactionTimeoutMs: 60_000,
        producerId: -1,
        producerEpoch: -1,
      }),
    (a) => !isNotYet(a.error),
  );
  expect(init).toMatchObject({ error: 'NONE', producerEpoch: 0 });
  return init;
}

describe.skipIf(skipWithoutKafka('referee/cluster.test.ts'))(`a cluster of Kafka ${TEST_RELEASE}`, () => {
  let cluster: Cluster;
  const connections = new Map<number, Connection>();
  /** One connection per node, through its proxy. */
  const to = async (id: number): Promise<Connection> => {
    const open = connections.get(id);
    if (open !== undefined) return open;
    const connection = await Connection.open(cluster.node(id).address);
    connections.set(id, connection);
    return connection;
  };

  beforeAll(async () => {
    cluster = await startCluster({ version: TEST_RELEASE, tv: 2 });
  }, 120_000);
  afterAll(async () => {
    for (const c of connections.values()) c.close();
    await cluster?.stop();
  });

  it('holds a marker at the leader: PrepareCommit until it is released, then CompleteCommit', async () => {
    const admin = await to(1);
    const topic = 'held-marker';
    expect(await createReplicatedTopic(admin, topic, 1)).toBe('NONE');
    const leaderId = (await describePartition(admin, topic, 0)).leaderId;
    const transactionalId = 'held-marker-txn';
    const coordinatorId = (await findCoordinator(admin, 'transaction', transactionalId)).nodeId;
    const coordinator = await to(coordinatorId);
    const leader = await to(leaderId);
    const { producerId } = await initProducer(coordinator, transactionalId);
    const batch = { producerId, producerEpoch: 0, baseSequence: 0, transactional: true };
    const produced = await produceBatch(
      leader,
      12,
      { transactionalId, topic, partition: 0 },
      { ...batch, records: [{ key: null, value: 'a' }] },
    );
    expect(produced).toMatchObject({ error: 'NONE', baseOffset: 0 });

    const lift = cluster.node(leaderId).proxy.add({
      match: (f) =>
        f.direction === 'request' && f.header.apiKey === WriteTxnMarkers.key && f.from === coordinatorId,
      action: { kind: 'hold' },
      times: 1,
    });
    const commit = await coordinator.send(
      EndTxn,
      { transactionalId, producerId, producerEpoch: 0, committed: true },
      5,
    );
    expect(commit).toMatchObject({ error: 'NONE', producerEpoch: 1 });
    const held = await cluster
      .node(leaderId)
      .proxy.nextHeld((f) => f.header.apiKey === WriteTxnMarkers.key, 10_000);
    expect(held.frame).toMatchObject({ node: leaderId, from: coordinatorId, direction: 'request' });
    const describe = async () =>
      (await coordinator.send(DescribeTransactions, { transactionalIds: [transactionalId] }))
        .transactionStates[0]!;
    // Held: the coordinator waits in PrepareCommit and the record stays above the LSO.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await describe()).toMatchObject({
      transactionState: 'PrepareCommit',
      topics: [{ topic, partitions: [0] }],
    });
    expect(await fetchCommitted(leader, topic, 0)).toMatchObject({ lastStableOffset: 0, records: [] });

    held.release();
    expect(await held.settled).toBe('released');
    expect(
      await waitFor('CompleteCommit', describe, (t) => t.transactionState === 'CompleteCommit'),
    ).toMatchObject({ producerEpoch: 1, topics: [] });
    const committed = await fetchCommitted(leader, topic, 0);
    expect(committed.lastStableOffset).toBe(2);
    expect(committed.records.map((r) => r.value?.toString())).toEqual(['a']);
    lift();
  }, 60_000);

  it('fails the coordinator over: the new one loads PrepareCommit and writes the marker itself', async () => {
    const admin = await to(1);
    const topic = 'failover';
    expect(await createReplicatedTopic(admin, topic, 1)).toBe('NONE');
    const leaderId = (await describePartition(admin, topic, 0)).leaderId;
    const transactionalId = 'failover-txn';
    const before = await describePartition(admin, TXN_STATE, 0);
    const oldId = before.leaderId;
    const oldCoordinator = await to(oldId);
    expect((await findCoordinator(admin, 'transaction', transactionalId)).nodeId).toBe(oldId);
    const { producerId } = await initProducer(oldCoordinator, transactionalId);
    const leader = await to(leaderId);
    const batch = { producerId, producerEpoch: 0, baseSequence: 0, transactional: true };
    await produceBatch(
      leader,
      12,
      { transactionalId, topic, partition: 0 },
      { ...batch, records: [{ key: null, value: 'f' }] },
    );
    const proxy = cluster.node(leaderId).proxy;
    proxy.add({
      match: (f) => f.header.apiKey === WriteTxnMarkers.key && f.from === oldId,
      action: { kind: 'hold' },
      times: 1,
    });
    await oldCoordinator.send(EndTxn, { transactionalId, producerId, producerEpoch: 0, committed: true }, 5);
    const stale = await proxy.nextHeld((f) => f.from === oldId, 10_000);

    // The __transaction_state partition moves to another in-sync node by a preferred election.
    const newId = before.isrNodes.find((id) => id !== oldId)!;
    const epoch = await electLeader(admin, TXN_STATE, 0, newId);
    expect(epoch).toBeGreaterThan(before.leaderEpoch);
    const found = await waitFor(
      'the new coordinator',
      () => findCoordinator(admin, 'transaction', transactionalId),
      (c) => c.nodeId === newId,
    );
    expect(found.port).toBe(Number(cluster.node(newId).address.split(':')[1]));
    // The old one has resigned; the new one loads the log and completes the commit on its own.
    const describe = async (c: Connection) =>
      (await c.send(DescribeTransactions, { transactionalIds: [transactionalId] })).transactionStates[0]!;
    expect((await describe(oldCoordinator)).error).toBe('NOT_COORDINATOR');
    const newCoordinator = await to(newId);
    expect(
      await waitFor(
        'CompleteCommit at the new coordinator',
        () => describe(newCoordinator),
        (t) => t.transactionState === 'CompleteCommit',
      ),
    ).toMatchObject({ error: 'NONE', producerId, producerEpoch: 1, topics: [] });
    const markers = async () => (await fetchCommitted(leader, topic, 0)).batches.filter((b) => b.control);
    const written = await markers();
    expect(written.map((b) => b.marker?.type)).toEqual(['COMMIT']);
    const coordinatorEpoch = written[0]!.marker!.coordinatorEpoch;

    // The resigned coordinator's marker, released late, is fenced by its older coordinator epoch.
    stale.release();
    expect(await stale.settled).toBe('released');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await markers()).map((b) => [b.marker?.type, b.marker?.coordinatorEpoch])).toEqual([
      ['COMMIT', coordinatorEpoch],
    ]);

    // A data partition's leadership moves the same way; its producer state moves with it.
    const next = (await describePartition(admin, topic, 0)).isrNodes.find((id) => id !== leaderId)!;
    await electLeader(admin, topic, 0, next);
    const producers = await (
      await to(next)
    ).send(DescribeProducers, { topics: [{ name: topic, partitionIndexes: [0] }] });
    expect(producers.topics[0]!.partitions[0]).toMatchObject({
      error: 'NONE',
      activeProducers: [{ producerId, producerEpoch: 1, currentTxnStartOffset: -1 }],
    });
  }, 60_000);

  it('reports a node that dies, then stops every JVM and proxy and removes its directory', async () => {
    const pids = cluster.nodes.map((n) => n.pid()!);
    const dir = dirname(dirname(cluster.nodes[0]!.logFile));
    expect(pids.every(alive)).toBe(true);
    // A node that dies unasked is reported; the ones stopped after it are not.
    await cluster.node(3).kill();
    expect(await cluster.died).toBe(3);
    expect(cluster.node(3).pid()).toBeUndefined();
    await cluster.stop();
    expect(pids.some(alive)).toBe(false);
    for (const node of cluster.nodes) expect(await accepts(node.address)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  }, 30_000);
});
