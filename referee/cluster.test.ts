// Three-node clusters behind their proxies, one at a time: a coordinator's WriteTxnMarkers held
// at the partition leader's proxy keeps the transaction in PrepareCommit until it is released,
// the coordinator fails over, a trace that needs a marker time-out replays, conform walks through
// failovers, transaction time-outs agree and mutants differ at them, a dead node ends a walk
// uncompared, and the cluster leaves no process, port or directory behind, on a signal to the
// command line too.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { walkRandom } from '../checker/engine/random.ts';
import { readTraceFile } from '../checker/engine/trace.ts';
import type { KafkaConfig } from '../model/kafka/config.ts';
import { kafkaProperties } from '../model/kafka/properties.ts';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { conformOn } from './conform.ts';
import { replayOnBroker } from './replay/replay.ts';
import { randomLabels, walkTrace } from './replay/walk.ts';
import { isRunning } from '../checker/processes.ts';

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
    expect(
      await produceBatch(
        leader,
        12,
        { transactionalId, topic, partition: 0 },
        { ...batch, records: [{ key: null, value: 'f' }] },
      ),
    ).toMatchObject({ error: 'NONE' });
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
    // Each node learns of the election on its own: the old one resigns a moment later.
    await waitFor(
      'the old coordinator to resign',
      () => describe(oldCoordinator),
      (t) => t.error === 'NOT_COORDINATOR',
    );
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

  it('replays a marker time-out: the late COMMIT ends the next transaction, as the trace says', async () => {
    const trace = readTraceFile('traces/kafka-3.5-marker-timeout.itf.json');
    const cfg = parseSpec('trace', trace.meta.spec, '').params as KafkaConfig;
    const walk = walkTrace(cfg, trace.actions, 'cluster');
    const outcome = await replayOnBroker({
      address: cluster.node(1).address,
      cfg,
      steps: walk.steps,
      cluster,
    });
    expect(outcome.message).toBe('agrees with Kafka on every step (29 steps)');
    expect(outcome.steps.find((s) => s.label === 'TC: markerTimeout(L0)')?.did).toMatch(
      /^closed the coordinator/,
    );
    expect(outcome.steps.at(-2)?.did).toMatch(/^released the coordinator's WriteTxnMarkers \(COMMIT\)/);
    expect(kafkaProperties.find((p) => p.name === 'ReadCommittedIsolation')!.holds(walk.last)).toBe(false);
  }, 60_000);

  it('conform: failovers and time-outs agree, mutants differ, a dead node ends a walk uncompared', async () => {
    const spec = loadSpecFile('specs/kafka/coordinator-failover.json');
    const cfg = parseSpec(spec.file, spec.raw, '').params as KafkaConfig;
    const on = { address: cluster.node(1).address, cluster };
    const labels = randomLabels(cfg, walkRandom(1, 0), 20, 'cluster');
    expect(labels).toContain('TC: coordinatorFailover');
    const result = await conformOn(on, cfg, { target: '', params: cfg, seed: 1, walks: 1, maxDepth: 20 });
    expect(result.walks.map((w) => [w.status, w.steps])).toEqual([['agrees', labels.length]]);

    // A coordinator that loses a Prepare* transaction's partitions on failover (a mutant) sends
    // no marker and completes at once; Kafka's new coordinator loads PrepareCommit and re-sends.
    const failoverInPrepare = [
      ...[
        'P0.0: initTransactions',
        'deliver P0.0→TC: InitProducerId',
        'deliver TC→P0.0: InitProducerId response',
      ],
      ...['P0.0: beginTransaction', 'P0.0: send(p0)', 'P0.0: commitTransaction', 'P0.0: sendTxnRequest'],
      ...['deliver P0.0→TC: AddPartitionsToTxn', 'deliver TC→P0.0: AddPartitionsToTxn response'],
      ...['P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce', 'deliver L0→P0.0: Produce response'],
      ...['P0.0: sendTxnRequest', 'deliver P0.0→TC: EndTxn', 'TC: coordinatorFailover'],
    ];
    const under = async (variant: unknown) => {
      const c = parseSpec(spec.file, { ...spec.raw, variant }, '').params as KafkaConfig;
      return replayOnBroker({ ...on, cfg: c, steps: walkTrace(c, failoverInPrepare, 'cluster').steps });
    };
    expect((await under('kafka-3.8')).message).toBe(
      `agrees with Kafka on every step (${failoverInPrepare.length} steps)`,
    );
    const mutant = await under({ base: 'kafka-3.8', enable: ['mutantLosePartitionsOnFailover'] });
    expect(mutant.status).toBe('diverges');
    expect(mutant.steps.at(-1)).toMatchObject({
      label: 'TC: coordinatorFailover',
      difference: { what: 'coordinator.t0.state', model: 'CompleteCommit', kafka: 'PrepareCommit' },
    });

    // A transaction timed out by Kafka's own clock (a short transaction.timeout.ms), and a
    // coordinator that times out a PrepareCommit transaction too (a mutant), which Kafka does not.
    const timeouts = loadSpecFile('specs/kafka/transaction-timeout.json');
    const opening = [
      ...[
        'P0.0: initTransactions',
        'deliver P0.0→TC: InitProducerId',
        'deliver TC→P0.0: InitProducerId response',
      ],
      ...['P0.0: beginTransaction', 'P0.0: send(p0)'],
    ];
    const produced = [
      ...[
        'P0.0: sendTxnRequest',
        'deliver P0.0→TC: AddPartitionsToTxn',
        'deliver TC→P0.0: AddPartitionsToTxn response',
      ],
      ...['P0.0: sendProduce(p0)', 'deliver P0.0→L0: Produce', 'deliver L0→P0.0: Produce response'],
    ];
    const timedOut = async (variant: unknown, labels: readonly string[]) => {
      const c = parseSpec(timeouts.file, { ...timeouts.raw, variant }, '').params as KafkaConfig;
      return replayOnBroker({ ...on, cfg: c, steps: walkTrace(c, labels, 'cluster').steps });
    };
    const ongoing = [...opening, ...produced, 'TC: transactionTimeout(t0)', 'deliver TC→L0: WriteTxnMarkers'];
    const aborted = await timedOut('kafka-3.5', ongoing);
    expect(aborted.message).toBe(`agrees with Kafka on every step (${ongoing.length} steps)`);
    expect(aborted.steps.find((r) => r.label === 'TC: transactionTimeout(t0)')?.did).toMatch(
      /^waited for Kafka to time the transaction out/,
    );
    const prepared = [
      ...opening,
      'P0.0: commitTransaction',
      ...produced,
      ...['P0.0: sendTxnRequest', 'deliver P0.0→TC: EndTxn', 'TC: transactionTimeout(t0)'],
    ];
    const timeoutMutant = await timedOut(
      { base: 'kafka-3.5', enable: ['mutantTimeoutAbortsPrepared'] },
      prepared,
    );
    expect(timeoutMutant.steps.at(-1)).toMatchObject({
      label: 'TC: transactionTimeout(t0)',
      difference: { what: 'coordinator.t0.state', model: 'PrepareAbort', kafka: 'PrepareCommit' },
    });

    // Node 1 leads p0, whose state every step compares: the step after its death cannot be.
    const { steps } = walkTrace(cfg, labels, 'cluster');
    const died = await replayOnBroker({
      ...on,
      cfg,
      steps,
      onStep: (r) => void (r.index === 3 && cluster.node(1).kill()),
    });
    expect(died.status).toBe('broker-died');
    expect(died.steps).toHaveLength(3);
    expect(died.message).toMatch(
      /^(node 1 of the cluster died|a node of the cluster went away) after 3 steps compared/,
    );
  }, 90_000);

  it('stops every JVM and proxy and removes its directory', async () => {
    // The node killed above was reported (once its JVM is gone); the ones stopped now are not.
    expect(await cluster.died).toBe(1);
    const pids = cluster.nodes.flatMap((n) => n.pid() ?? []);
    const dir = dirname(dirname(cluster.nodes[0]!.logFile));
    expect(pids).toHaveLength(2);
    expect(pids.every(isRunning)).toBe(true);
    expect(cluster.node(1).pid()).toBeUndefined();
    await cluster.stop();
    expect(pids.some(isRunning)).toBe(false);
    for (const node of cluster.nodes) expect(await accepts(node.address)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  }, 30_000);
});

/** The processes whose command line names `dir`: the cluster's JVMs and their watchdogs. */
function processesIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

// The command line's cluster on every way out: a first signal stops it between steps, and a
// process killed outright leaves it to the JVMs' watchdogs; either way no JVM, port or directory
// stays. Each case starts a cluster of its own, after the one above has stopped.
describe.skipIf(skipWithoutKafka('referee/cluster.test.ts'))('txcheck conform --kafka-cluster', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'ends every JVM and frees every port when sent %s',
    async (signal) => {
      const tmp = mkdtempSync(join(tmpdir(), 'txcheck-cluster-signal-'));
      const root = fileURLToPath(new URL('..', import.meta.url));
      const args = ['conform', 'specs/kafka/marker-timeouts.json', '--kafka-cluster', TEST_RELEASE];
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'checker/cli.ts', ...args, '--walks', '1000'],
        {
          cwd: root,
          env: { ...process.env, TMPDIR: tmp },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await waitFor(
          'a first walk',
          async () => out,
          (o) => o.includes('walk 0:'),
          120_000,
        );
        const [name] = readdirSync(tmp).filter((n) => n.startsWith('txcheck-cluster-'));
        const dir = join(tmp, name!);
        const ports = [1, 2, 3].flatMap((id) =>
          [
            ...readFileSync(join(dir, `node-${id}`, 'server.properties'), 'utf8').matchAll(
              /127\.0\.0\.1:(\d+)/g,
            ),
          ].map((m) => `127.0.0.1:${m[1]}`),
        );
        expect(new Set(ports).size).toBe(9); // each node's listener, controller and proxy
        const jvms = processesIn(dir).filter((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka'),
        );
        expect(jvms).toHaveLength(3);

        child.kill(signal);
        const code = await exited;
        if (signal === 'SIGTERM') {
          expect(code).toBe(3);
          expect(out).toMatch(/stopped by SIGTERM/);
        }
        // A watchdog gives its JVM 15 s to stop before it kills it.
        await waitFor(
          'the JVMs and watchdogs to end',
          async () => processesIn(dir),
          (left) => left.length === 0,
          30_000,
        );
        expect(existsSync(dir)).toBe(false);
        for (const address of ports) expect(await accepts(address)).toBe(false);
      } finally {
        child.kill('SIGKILL');
        rmSync(tmp, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
