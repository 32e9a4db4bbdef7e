// The replay's hold on a cluster's network: where each model node lives now (the coordinator is
// the leader of __transaction_state's partition, each data partition has a leader of its own),
// the coordinator's WriteTxnMarkers requests of the replay's topic held at the leaders' proxies
// until the trace delivers, loses or times them out, and the coordinator moved on demand.
import {
  type Cluster,
  CLUSTER_SIZE,
  createReplicatedTopic,
  describePartition,
  electLeader,
} from '../cluster.ts';
import { Connection } from '../driver/connection.ts';
import { findCoordinator, isNotYet, waitFor } from '../driver/driver.ts';
import {
  DescribeTransactions,
  InitProducerId,
  IsolationLevel,
  ListOffsets,
  OffsetSpec,
  type WritableTxnMarker,
  WriteTxnMarkers,
  decodeWriteTxnMarkersRequest,
} from '../driver/messages.ts';
import { type FrameInfo, type Held, requestBody } from '../proxy.ts';

export const TXN_STATE = '__transaction_state';

/** How long the coordinator is given to send (or re-send) a marker the model has sent. */
const MARKER_WAIT_MS = 10_000;

/** The markers a WriteTxnMarkers request frame carries. */
export function markersOf(frame: FrameInfo): readonly WritableTxnMarker[] {
  const version = frame.header.apiVersion;
  return decodeWriteTxnMarkersRequest(
    requestBody(frame.body, version >= WriteTxnMarkers.flexibleFrom),
    version,
  ).markers;
}

/** Kafka sent no WriteTxnMarkers where the model has one on its way. */
export class MarkerNotSent extends Error {}

/** The replay's topic, placed and watched on a cluster, for one walk. */
export class HeldNetwork {
  private readonly connections = new Map<number, Connection>();
  /** Lifts the walk's hold rules. */
  private readonly lifts: (() => void)[] = [];
  /** Per partition: the proxy connections that carried the walk's markers, oldest first. */
  private readonly markerConnections: number[][];
  /** Per partition: the model's marker connections seen so far. */
  private readonly modelConnections: Set<number>[];
  private coordinatorId = 0;
  private failovers = 0;
  /** Per partition: the model's marker connections on which a request was lost, once a loss. */
  private readonly lostOn: number[][];
  private readonly leaders: number[];

  constructor(
    readonly cluster: Cluster,
    private readonly topic: string,
    partitions: number,
  ) {
    if (partitions > CLUSTER_SIZE)
      throw new RangeError(
        `a cluster of ${CLUSTER_SIZE} gives at most ${CLUSTER_SIZE} partitions a leader each`,
      );
    // One leader per partition: Kafka sends the markers for partitions of one node in one request.
    this.leaders = Array.from({ length: partitions }, (_, p) => (p % CLUSTER_SIZE) + 1);
    this.markerConnections = this.leaders.map(() => []);
    this.modelConnections = this.leaders.map(() => new Set());
    this.lostOn = this.leaders.map(() => []);
  }

  /** A connection to a node for the replay's own reads and admin requests. */
  async to(node: number): Promise<Connection> {
    let c = this.connections.get(node);
    if (c === undefined) {
      c = await Connection.open(this.cluster.node(node).address, { requestTimeoutMs: 10_000 });
      this.connections.set(node, c);
    }
    return c;
  }

  coordinatorAddress(): string {
    return this.cluster.node(this.coordinatorId).address;
  }
  leaderAddress(partition: number): string {
    return this.cluster.node(this.leaders[partition]!).address;
  }
  coordinator(): Promise<Connection> {
    return this.to(this.coordinatorId);
  }
  leader(partition: number): Promise<Connection> {
    return this.to(this.leaders[partition]!);
  }

  /**
   * Creates the topic, each partition led by its own node and served, finds the coordinator of
   * `transactionalId`, and holds every marker of the topic from now on.
   */
  async prepare(transactionalId: string): Promise<Connection> {
    const admin = await this.to(1);
    const made = await createReplicatedTopic(admin, this.topic, this.leaders.length, this.leaders);
    if (made !== 'NONE') throw new Error(`CreateTopics ${this.topic}: ${made}`);
    for (const [p, leader] of this.leaders.entries())
      await waitFor(
        `${this.topic}-${p} served by node ${leader}`,
        async () =>
          (
            await (
              await this.to(leader)
            ).send(ListOffsets, {
              isolationLevel: IsolationLevel.READ_UNCOMMITTED,
              topics: [
                { name: this.topic, partitions: [{ partitionIndex: p, timestamp: OffsetSpec.LATEST }] },
              ],
            })
          ).topics[0]!.partitions[0]!.error,
        (error) => error === 'NONE',
      );
    this.coordinatorId = (await findCoordinator(admin, 'transaction', transactionalId)).nodeId;
    for (const [p, leader] of this.leaders.entries()) {
      const mine = (f: FrameInfo): boolean =>
        f.direction === 'request' &&
        f.header.apiKey === WriteTxnMarkers.key &&
        markersOf(f).some((m) =>
          m.topics.some((t) => t.name === this.topic && t.partitionIndexes.includes(p)),
        );
      this.lifts.push(
        this.cluster.node(leader).proxy.add({
          match: (f) => {
            if (!mine(f)) return false;
            const seen = this.markerConnections[p]!;
            if (!seen.includes(f.connection)) seen.push(f.connection);
            return true;
          },
          action: { kind: 'hold' },
        }),
      );
    }
    return this.coordinator();
  }

  /** Notes the model's marker connections to partition p's leader, as the walk meets them. */
  noteModelConnection(partition: number, conn: number): void {
    this.modelConnections[partition]!.add(conn);
  }

  /**
   * The held frame carrying the model's marker on connection `conn` to partition p's leader:
   * the model's connections and the proxy's are matched in the order each side opened them.
   */
  private async markerFrame(partition: number, conn: number): Promise<Held> {
    this.noteModelConnection(partition, conn);
    // A loss severed Kafka's connection while the model's goes on: each took one more of Kafka's.
    const rank =
      [...this.modelConnections[partition]!].sort((a, b) => a - b).indexOf(conn) +
      this.lostOn[partition]!.filter((c) => c <= conn).length;
    const proxy = this.cluster.node(this.leaders[partition]!).proxy;
    const seen = this.markerConnections[partition]!;
    const deadline = Date.now() + MARKER_WAIT_MS;
    while (seen.length <= rank) {
      if (Date.now() > deadline)
        throw new MarkerNotSent(
          `Kafka's coordinator sent no WriteTxnMarkers to p${partition}'s leader on a ${ordinal(rank + 1)} connection in ${MARKER_WAIT_MS} ms`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const connection = seen[rank]!;
    return proxy
      .nextHeld((f) => f.connection === connection, Math.max(deadline - Date.now(), 1))
      .catch(() => {
        throw new MarkerNotSent(
          `Kafka's coordinator has no WriteTxnMarkers to p${partition}'s leader waiting on its ${ordinal(rank + 1)} connection`,
        );
      });
  }

  /** Delivers (releases) or loses (drops) the model's marker request; says what it carried. */
  async marker(partition: number, conn: number, deliver: boolean): Promise<readonly WritableTxnMarker[]> {
    const held = await this.markerFrame(partition, conn);
    const markers = markersOf(held.frame);
    if (deliver) held.release();
    else {
      // Kafka's coordinator has one marker request in flight per node and resends only once the
      // request fails: severed, it fails now and is resent at once, as the model's is after a loss.
      held.drop({ sever: true });
      this.lostOn[partition]!.push(conn);
    }
    return markers;
  }

  /**
   * The coordinator's marker request on `conn` times out: its connection is closed under it, which
   * Kafka's NetworkClient handles as it handles a timed-out request (a disconnection); the request
   * stays held, to be delivered or lost later.
   */
  async markerTimeout(partition: number, conn: number): Promise<void> {
    const held = await this.markerFrame(partition, conn);
    this.cluster.node(this.leaders[partition]!).proxy.sever(held.frame.connection);
  }

  /** A marker connection the coordinator closed on its own clock (its request timed out), if any. */
  timedOutByKafka(): string | undefined {
    for (const [p, seen] of this.markerConnections.entries()) {
      const proxy = this.cluster.node(this.leaders[p]!).proxy;
      if (seen.some((c) => proxy.closedByClient.has(c)))
        return `Kafka's coordinator timed out a marker request to p${p}'s leader on its own clock`;
    }
    return undefined;
  }

  /**
   * Moves the coordinator to another in-sync node by a preferred election, and waits until the old
   * one has resigned and the new one has loaded; returns the old coordinator's address.
   */
  async failover(transactionalIds: readonly string[]): Promise<string> {
    const admin = await this.to(this.leaders[0]!);
    const before = await describePartition(admin, TXN_STATE, 0);
    const old = before.leaderId;
    const next = before.isrNodes.filter((id) => id !== old).sort((a, b) => a - b)[0];
    if (next === undefined) throw new Error(`${TXN_STATE}-0 has no other in-sync replica to move to`);
    await electLeader(admin, TXN_STATE, 0, next);
    const describe = async (node: number) =>
      (await (await this.to(node)).send(DescribeTransactions, { transactionalIds })).transactionStates;
    await waitFor(
      `node ${old} to resign the coordinator`,
      () => describe(old),
      (states) => states.every((t) => t.error === 'NOT_COORDINATOR'),
    );
    await waitFor(
      `node ${next} to load the coordinator`,
      () => describe(next),
      (states) => states.every((t) => !isNotYet(t.error)),
    );
    // A node that never gave out producer ids fetches its first block when asked, answering
    // COORDINATOR_LOAD_IN_PROGRESS meanwhile: a fresh id of the replay's own has it fetched first.
    const ready = `${this.topic}-ready-${++this.failovers}`;
    const init = await waitFor(
      `node ${next} to give out producer ids`,
      async () =>
        (
          await (
            await this.to(next)
          ).send(InitProducerId, {
            transactionalId: ready,
            transactionTimeoutMs: 60_000,
            producerId: -1,
            producerEpoch: -1,
          })
        ).error,
      (error) => !isNotYet(error),
    );
    if (init !== 'NONE') throw new Error(`InitProducerId ${ready} on node ${next}: ${init}`);
    this.coordinatorId = next;
    return this.cluster.node(old).address;
  }

  /** Releases what the walk holds and lifts its rules; closes its connections. */
  close(): void {
    for (const lift of this.lifts.splice(0)) lift();
    for (const leader of this.leaders)
      for (const held of this.cluster.node(leader).proxy.held()) if (this.isMine(held.frame)) held.release();
    for (const c of this.connections.values()) c.close();
  }

  private isMine(f: FrameInfo): boolean {
    return (
      f.header.apiKey === WriteTxnMarkers.key &&
      f.direction === 'request' &&
      markersOf(f).some((m) => m.topics.some((t) => t.name === this.topic))
    );
  }
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}
