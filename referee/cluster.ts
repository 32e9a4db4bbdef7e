// A three-node KRaft cluster on 127.0.0.1 whose network the driver holds: each node is a
// combined broker+controller (three JVMs rather than six, on two shared cores; the quorum of three
// voters survives one node down), and each advertises the port of a proxy (proxy.ts) in front of
// its real listener, so that every client-to-broker and broker-to-broker request passes a proxy.
// The controllers' own quorum traffic goes direct: no model step is about it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BrokerSetupError,
  type KafkaProcess,
  cachedClasspath,
  checkVersion,
  clusterId,
  formatStorage,
  freePorts,
  jvmOptions,
  kraftProperties,
  spawnKafka,
  tail,
  waitUntilServing,
} from './broker.ts';
import { Connection } from './driver/connection.ts';
import { waitFor } from './driver/driver.ts';
import {
  AlterPartitionReassignments,
  CreateTopics,
  ElectLeaders,
  ElectionType,
  Metadata,
  type MetadataPartition,
} from './driver/messages.ts';
import { KafkaProxy } from './proxy.ts';

export interface ClusterOptions {
  readonly version: string;
  /** The transaction.version to finalize (0, 1 or 2); the release's default when absent. */
  readonly tv?: number;
  /** More server.properties for every node, over the defaults below. */
  readonly config?: Readonly<Record<string, string>>;
  /** Each JVM's heap. */
  readonly heapMb?: number;
  readonly startTimeoutMs?: number;
}

export interface ClusterNode {
  readonly id: number;
  /** 127.0.0.1:PORT of the node's proxy: the address clients and the other brokers use. */
  readonly address: string;
  readonly proxy: KafkaProxy;
  readonly logFile: string;
  /** The running JVM's pid, or undefined while the node is down. */
  pid(): number | undefined;
  /** Kills the node's JVM outright, as a crash would; the cluster reports it in `died`. */
  kill(): Promise<void>;
}

export interface Cluster {
  readonly version: string;
  /** The transaction.version the cluster finalized (0 when it finalized none). */
  readonly transactionVersion: number;
  readonly nodes: readonly ClusterNode[];
  /** Settles with the node's id when a JVM exits, or a proxy closes, that was not asked to. */
  readonly died: Promise<number>;
  node(id: number): ClusterNode;
  /** Every proxy forwards everything again: rules lifted, held frames released. */
  releaseAll(): void;
  /** Kills every JVM, closes every proxy and removes the log dirs; a second call is harmless. */
  stop(): Promise<void>;
}

export const CLUSTER_SIZE = 3;

function nodeProperties(
  dir: string,
  id: number,
  ports: { broker: number; controller: number; proxy: number },
  voters: string,
  extra: Readonly<Record<string, string>>,
): string {
  return kraftProperties({
    dir,
    id,
    voters,
    port: ports.broker,
    controllerPort: ports.controller,
    advertised: `127.0.0.1:${ports.proxy}`,
    replicas: CLUSTER_SIZE,
    extra: {
      // Leadership moves only when the driver moves it.
      'auto.leader.rebalance.enable': 'false',
      'num.replica.fetchers': '1',
      ...extra,
    },
  });
}

/** Starts three nodes behind their proxies; resolves once every node serves and registered. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const version = checkVersion(options.version);
  if (options.tv !== undefined && ![0, 1, 2].includes(options.tv))
    throw new BrokerSetupError(`transaction.version must be 0, 1 or 2, not ${options.tv}`);
  const classpath = cachedClasspath(version);
  if (classpath === undefined)
    throw new BrokerSetupError(`Kafka ${version} is not fetched: run \`npm run kafka -- fetch ${version}\``);
  const java = ['-cp', classpath, ...jvmOptions(options.heapMb ?? 384)];
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-cluster-'));
  const ids = Array.from({ length: CLUSTER_SIZE }, (_, i) => i + 1);
  const proxies: KafkaProxy[] = [];
  const jvms = new Map<number, KafkaProcess>();
  let stopped = false;
  let died!: (id: number) => void;
  const death = new Promise<number>((resolve) => (died = resolve));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      stopped = true;
      // The data goes with the cluster: no controlled shutdown to wait for.
      await Promise.all([...jvms.values()].map((jvm) => jvm.kill()));
      await Promise.all(proxies.map((p) => p.close()));
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    const ports = await freePorts(3 * CLUSTER_SIZE);
    const portsOf = (id: number) => ({
      broker: ports[3 * (id - 1)]!,
      controller: ports[3 * (id - 1) + 1]!,
      proxy: ports[3 * (id - 1) + 2]!,
    });
    for (const id of ids)
      proxies.push(
        await KafkaProxy.start(`127.0.0.1:${portsOf(id).broker}`, { node: id, port: portsOf(id).proxy }),
      );
    for (const [i, proxy] of proxies.entries()) void proxy.closed.then(() => stopped || died(i + 1));
    const voters = ids.map((id) => `${id}@127.0.0.1:${portsOf(id).controller}`).join(',');
    const cluster = clusterId();
    const files = ids.map((id) => {
      const home = join(dir, `node-${id}`);
      mkdirSync(home);
      const properties = join(home, 'server.properties');
      writeFileSync(properties, nodeProperties(home, id, portsOf(id), voters, options.config ?? {}));
      return { properties, logFile: join(home, 'kafka.log') };
    });
    await Promise.all(files.map((f) => formatStorage(version, java, f.properties, cluster, options.tv)));

    const launch = (id: number): KafkaProcess => {
      const { properties, logFile } = files[id - 1]!;
      const jvm = spawnKafka(java, properties, logFile, dir);
      jvms.set(id, jvm);
      void jvm.exited.then(() => {
        if (jvms.get(id) !== jvm) return;
        jvms.delete(id);
        if (!stopped) died(id);
      });
      return jvm;
    };
    const deadline = () => Date.now() + (options.startTimeoutMs ?? 90_000);
    const nodes: ClusterNode[] = ids.map((id) => ({
      id,
      address: proxies[id - 1]!.address,
      proxy: proxies[id - 1]!,
      logFile: files[id - 1]!.logFile,
      pid: () => jvms.get(id)?.pid,
      kill: async () => {
        await jvms.get(id)?.kill();
      },
    }));
    for (const id of ids) launch(id);
    let transactionVersion = 0;
    for (const id of ids) {
      const jvm = jvms.get(id);
      const connection = await waitUntilServing(
        proxies[id - 1]!.address,
        () => jvm === undefined || jvm.hasExited(),
        deadline(),
      ).catch((e: Error) => {
        throw new Error(`node ${id}: ${e.message}\n${tail(files[id - 1]!.logFile)}`, { cause: e });
      });
      connection.close();
      transactionVersion =
        connection.apiVersions!.finalizedFeatures.find((f) => f.name === 'transaction.version')
          ?.maxVersionLevel ?? 0;
    }
    if (options.tv !== undefined && transactionVersion !== options.tv)
      throw new Error(
        `asked for transaction.version=${options.tv}, the cluster finalized ${transactionVersion}`,
      );
    await awaitBrokers(proxies[0]!.address, ids);
    return {
      version,
      transactionVersion,
      nodes,
      died: death,
      node: (id) => {
        const node = nodes[id - 1];
        if (node === undefined) throw new RangeError(`no node ${id} in a cluster of ${CLUSTER_SIZE}`);
        return node;
      },
      releaseAll: () => proxies.forEach((p) => p.releaseAll()),
      stop,
    };
  } catch (e) {
    await stop();
    if (e instanceof BrokerSetupError) throw e;
    throw new Error(`a Kafka ${version} cluster did not start: ${(e as Error).message}`, { cause: e });
  }
}

/** Waits until `address` lists every node in `ids` as a live broker. */
async function awaitBrokers(address: string, ids: readonly number[]): Promise<void> {
  const connection = await Connection.open(address, { requestTimeoutMs: 5000 });
  try {
    await waitFor(
      'every broker registered',
      () => connection.send(Metadata, { topics: [] }),
      (a) => ids.every((id) => a.brokers.some((b) => b.nodeId === id)),
      60_000,
    );
  } finally {
    connection.close();
  }
}

/**
 * Creates a topic with a replica on every node and waits until each partition's leader serves it
 * and every replica is in sync; returns the error name, NONE when made. With `leaders`, partition
 * p is led by node `leaders[p]`.
 */
export async function createReplicatedTopic(
  connection: Connection,
  name: string,
  partitions: number,
  leaders?: readonly number[],
): Promise<string> {
  const nodes = Array.from({ length: CLUSTER_SIZE }, (_, i) => i + 1);
  const placed =
    leaders === undefined
      ? { numPartitions: partitions, replicationFactor: CLUSTER_SIZE }
      : {
          numPartitions: -1,
          replicationFactor: -1,
          assignments: leaders.map((leader, partitionIndex) => ({
            partitionIndex,
            brokerIds: [leader, ...nodes.filter((id) => id !== leader)],
          })),
        };
  const answer = await connection.send(CreateTopics, {
    topics: [{ name, ...placed }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const error = answer.topics[0]!.error;
  if (error !== 'NONE') return error;
  await waitFor(
    `the partitions of ${name}`,
    () => connection.send(Metadata, { topics: [name] }),
    (a) =>
      a.topics[0]!.error === 'NONE' &&
      a.topics[0]!.partitions.length === partitions &&
      a.topics[0]!.partitions.every(
        (p) =>
          p.isrNodes.length === CLUSTER_SIZE &&
          (leaders === undefined ? p.leaderId >= 0 : p.leaderId === leaders[p.partitionIndex]),
      ),
  );
  return error;
}

/** A partition's leader, replicas and ISR as `connection`'s broker knows them. */
export async function describePartition(
  connection: Connection,
  topic: string,
  partition: number,
): Promise<MetadataPartition> {
  const answer = await connection.send(Metadata, { topics: [topic] });
  const t = answer.topics[0]!;
  const p = t.partitions.find((q) => q.partitionIndex === partition);
  if (t.error !== 'NONE' || p === undefined)
    throw new Error(
      `Metadata ${topic}-${partition}: ${t.error}${p === undefined ? ', no such partition' : ''}`,
    );
  return p;
}

/**
 * Moves a partition's leadership to `to` by a preferred-leader election: the replica list is
 * reordered to put `to` first, then the preferred replica elected. Every node stays up. Resolves
 * with the new leader epoch once `connection`'s broker knows it.
 */
export async function electLeader(
  connection: Connection,
  topic: string,
  partition: number,
  to: number,
): Promise<number> {
  const before = await describePartition(connection, topic, partition);
  if (before.leaderId === to) return before.leaderEpoch;
  if (!before.isrNodes.includes(to))
    throw new Error(`${topic}-${partition}: node ${to} is not in sync (ISR ${before.isrNodes.join(',')})`);
  const replicas = [to, ...before.replicaNodes.filter((id) => id !== to)];
  const moved = await connection.send(AlterPartitionReassignments, {
    timeoutMs: 10_000,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, replicas }] }],
  });
  const movedError = moved.error !== 'NONE' ? moved.error : moved.responses[0]?.partitions[0]?.error;
  if (movedError !== 'NONE') throw new Error(`reassigning ${topic}-${partition}: ${movedError}`);
  const elected = await waitFor(
    `electing ${to} for ${topic}-${partition}`,
    () =>
      connection.send(ElectLeaders, {
        electionType: ElectionType.PREFERRED,
        topicPartitions: [{ topic, partitions: [partition] }],
        timeoutMs: 10_000,
      }),
    // The reassignment reaches the controller's view a moment after it answers.
    (a) => a.error !== 'NONE' || a.responses[0]?.partitions[0]?.error !== 'PREFERRED_LEADER_NOT_AVAILABLE',
  );
  const error = elected.error !== 'NONE' ? elected.error : elected.responses[0]?.partitions[0]?.error;
  if (error !== 'NONE' && error !== 'ELECTION_NOT_NEEDED')
    throw new Error(`electing ${to} for ${topic}-${partition}: ${error}`);
  const after = await waitFor(
    `${topic}-${partition} led by ${to}`,
    () => describePartition(connection, topic, partition),
    (p) => p.leaderId === to,
  );
  return after.leaderEpoch;
}
