// Every request of the driver against a real broker at transaction version 2: whole
// transactions in the version-2 form (Produce v12, EndTxn v5) and the version-1 form
// (AddPartitionsToTxn, Produce v11, AddOffsetsToTxn, TxnOffsetCommit v4, EndTxn v4), what a
// read_committed consumer sees after a commit and an abort, and a fenced epoch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, startBroker } from './broker.ts';
import { Connection, UnsupportedVersionError } from './driver/connection.ts';
import {
  createTopic,
  fetchCommitted,
  findCoordinator,
  isNotYet,
  listOffsets,
  produceBatch,
  waitFor,
} from './driver/driver.ts';
import {
  AddOffsetsToTxn,
  AddPartitionsToTxn,
  AddPartitionsToTxnBroker,
  DRIVER_APIS,
  DescribeProducers,
  DescribeTransactions,
  EndTxn,
  InitProducerId,
  TxnOffsetCommit,
} from './driver/messages.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

describe.skipIf(skipWithoutKafka('referee/driver.test.ts'))(
  `the driver against Kafka ${TEST_RELEASE}`,
  () => {
    let broker: Broker;
    /** The transaction coordinator's connection and the partition leader's: one node, two sockets. */
    let coordinator: Connection;
    let leader: Connection;

    beforeAll(async () => {
      broker = await startBroker({ version: TEST_RELEASE, tv: 2 });
      coordinator = await Connection.open(broker.address);
      leader = await Connection.open(broker.address);
    });
    afterAll(async () => {
      coordinator?.close();
      leader?.close();
      await broker?.stop();
    });

    /** A producer id and epoch for a fresh transactional id, once its coordinator has loaded. */
    async function initProducer(
      transactionalId: string,
    ): Promise<{ producerId: number; producerEpoch: number }> {
      const found = await findCoordinator(coordinator, 'transaction', transactionalId);
      expect(found).toMatchObject({ error: 'NONE', nodeId: 1 });
      expect(`${found.host}:${found.port}`).toBe(broker.address);
      const init = await waitFor(
        `InitProducerId ${transactionalId}`,
        () =>
          coordinator.send(InitProducerId, {
            transactionalId,
            transactionTimeoutMs: 60_000,
            producerId: -1,
            producerEpoch: -1,
          }),
        (a) => !isNotYet(a.error),
      );
      expect(init.error).toBe('NONE');
      expect(init.producerEpoch).toBe(0);
      return init;
    }

    /**
     * TxnOffsetCommit of one offset to the group's coordinator, found first; the coordinator may
     * still be loading the group's partition, and a client retries then.
     */
    async function commitOffset(
      version: number,
      producer: { transactionalId: string; producerId: number; producerEpoch: number },
      groupId: string,
      topic: string,
      committedOffset: number,
    ) {
      expect(await findCoordinator(coordinator, 'group', groupId)).toMatchObject({
        error: 'NONE',
        nodeId: 1,
      });
      const answer = await waitFor(
        'TxnOffsetCommit',
        () =>
          leader.send(
            TxnOffsetCommit,
            {
              ...producer,
              groupId,
              generationId: -1,
              memberId: '',
              groupInstanceId: null,
              topics: [
                {
                  name: topic,
                  partitions: [
                    { partitionIndex: 0, committedOffset, committedLeaderEpoch: -1, committedMetadata: null },
                  ],
                },
              ],
            },
            version,
          ),
        (a) => !isNotYet(a.topics[0]!.resultsByPartition[0]!.error),
      );
      return answer.topics;
    }

    const describeTxn = async (transactionalId: string) =>
      (await coordinator.send(DescribeTransactions, { transactionalIds: [transactionalId] }))
        .transactionStates[0]!;

    const values = (records: { value: Buffer | null }[]) => records.map((r) => r.value?.toString());

    it('speaks every version the driver writes, and refuses one the broker does not', async () => {
      for (const api of DRIVER_APIS)
        for (let v = api.versions[0]; v <= api.versions[1]; v++)
          expect([api.name, v, leader.supports(api, v)]).toEqual([api.name, v, true]);
      const endTxnV99 = { ...EndTxn, versions: [3, 99] as const };
      await expect(
        leader.send(
          endTxnV99,
          { transactionalId: 'x', producerId: 0, producerEpoch: 0, committed: true },
          99,
        ),
      ).rejects.toThrow(UnsupportedVersionError);
    });

    it('creates a topic once', async () => {
      expect(await createTopic(leader, 'created', 1)).toBe('NONE');
      expect(await createTopic(leader, 'created', 1)).toBe('TOPIC_ALREADY_EXISTS');
    });

    it('commits and aborts transactions of version 2, and fences an old epoch', async () => {
      const topic = 'tv2';
      const id = 'tv2-producer';
      expect(await createTopic(leader, topic, 2)).toBe('NONE');
      const { producerId } = await initProducer(id);
      const to = { transactionalId: id, topic, partition: 0 };
      const batch = (producerEpoch: number, baseSequence: number, records: string[]) => ({
        producerId,
        producerEpoch,
        baseSequence,
        transactional: true,
        records: records.map((value) => ({ key: null, value })),
      });

      // Produce v12 adds the partition to the transaction: no AddPartitionsToTxn.
      expect(await produceBatch(leader, 12, to, batch(0, 0, ['a', 'b', 'c']))).toMatchObject({
        error: 'NONE',
        baseOffset: 0,
      });
      expect(await describeTxn(id)).toMatchObject({
        error: 'NONE',
        transactionState: 'Ongoing',
        producerId,
        producerEpoch: 0,
        topics: [{ topic, partitions: [0] }],
      });
      const producers = await leader.send(DescribeProducers, {
        topics: [{ name: topic, partitionIndexes: [0] }],
      });
      expect(producers.topics[0]!.partitions[0]).toMatchObject({
        error: 'NONE',
        activeProducers: [{ producerId, producerEpoch: 0, lastSequence: 2, currentTxnStartOffset: 0 }],
      });
      // The open transaction holds the LSO at its first offset; a read_committed fetch stops there.
      expect(await listOffsets(leader, topic, 0)).toEqual({ highWatermark: 3, lastStableOffset: 0 });
      expect(await fetchCommitted(leader, topic, 0)).toMatchObject({ lastStableOffset: 0, records: [] });

      // A leader's verifyOnly check: partition 0 is in the transaction, partition 1 is not.
      const verified = await leader.send(AddPartitionsToTxnBroker, {
        transactions: [
          {
            transactionalId: id,
            producerId,
            producerEpoch: 0,
            verifyOnly: true,
            topics: [{ name: topic, partitions: [0, 1] }],
          },
        ],
      });
      expect(verified.error).toBe('NONE');
      const byPartition = Object.fromEntries(
        verified.resultsByTransaction[0]!.topicResults[0]!.resultsByPartition.map((p) => [
          p.partitionIndex,
          p.error,
        ]),
      );
      expect(byPartition[0]).toBe('NONE');
      expect(byPartition[1]).not.toBe('NONE');

      // EndTxn v5 bumps the epoch and answers with the epoch to use next.
      const commit = await coordinator.send(
        EndTxn,
        { transactionalId: id, producerId, producerEpoch: 0, committed: true },
        5,
      );
      expect(commit).toMatchObject({ error: 'NONE', producerId, producerEpoch: 1 });
      const committed = await waitFor(
        'the commit marker',
        () => fetchCommitted(leader, topic, 0),
        (v) => v.lastStableOffset === 4,
      );
      expect(values(committed.records)).toEqual(['a', 'b', 'c']);
      expect(committed.batches.at(-1)).toMatchObject({
        baseOffset: 3,
        control: true,
        producerId,
        producerEpoch: 1,
        marker: { type: 'COMMIT' },
      });
      expect(
        await waitFor(
          'CompleteCommit',
          () => describeTxn(id),
          (t) => t.transactionState === 'CompleteCommit',
        ),
      ).toMatchObject({
        producerEpoch: 1,
        topics: [],
      });

      // The next transaction, at epoch 1 and sequence 0, aborted: its records stay hidden.
      expect(await produceBatch(leader, 12, to, batch(1, 0, ['x', 'y']))).toMatchObject({
        error: 'NONE',
        baseOffset: 4,
      });
      // TxnOffsetCommit v5 adds the group's partition itself: no AddOffsetsToTxn.
      expect(
        await commitOffset(5, { transactionalId: id, producerId, producerEpoch: 1 }, 'tv2-group', topic, 3),
      ).toEqual([{ name: topic, resultsByPartition: [{ partitionIndex: 0, error: 'NONE' }] }]);
      expect((await describeTxn(id)).topics).toEqual(
        expect.arrayContaining([
          { topic, partitions: [0] },
          { topic: '__consumer_offsets', partitions: [0] },
        ]),
      );
      const abort = await coordinator.send(
        EndTxn,
        { transactionalId: id, producerId, producerEpoch: 1, committed: false },
        5,
      );
      expect(abort).toMatchObject({ error: 'NONE', producerId, producerEpoch: 2 });
      const aborted = await waitFor(
        'the abort marker',
        () => fetchCommitted(leader, topic, 0),
        (v) => v.lastStableOffset === 7,
      );
      expect(values(aborted.records)).toEqual(['a', 'b', 'c']);
      expect(aborted.abortedTransactions).toEqual([{ producerId, firstOffset: 4 }]);
      expect(aborted.batches.at(-1)).toMatchObject({
        control: true,
        producerEpoch: 2,
        marker: { type: 'ABORT' },
      });
      expect(await listOffsets(leader, topic, 0)).toEqual({ highWatermark: 7, lastStableOffset: 7 });

      // A new InitProducerId for the id bumps the epoch: the old epoch is fenced everywhere.
      await waitFor(
        'CompleteAbort',
        () => describeTxn(id),
        (t) => t.transactionState === 'CompleteAbort',
      );
      const reinit = await coordinator.send(InitProducerId, {
        transactionalId: id,
        transactionTimeoutMs: 60_000,
        producerId: -1,
        producerEpoch: -1,
      });
      expect(reinit).toMatchObject({ error: 'NONE', producerId, producerEpoch: 3 });
      expect((await produceBatch(leader, 12, to, batch(2, 0, ['late']))).error).toBe(
        'INVALID_PRODUCER_EPOCH',
      );
      expect(
        (
          await coordinator.send(
            EndTxn,
            { transactionalId: id, producerId, producerEpoch: 2, committed: true },
            5,
          )
        ).error,
      ).toBe('PRODUCER_FENCED');
      expect(
        (
          await coordinator.send(InitProducerId, {
            transactionalId: id,
            transactionTimeoutMs: 60_000,
            producerId,
            producerEpoch: 2,
          })
        ).error,
      ).toBe('PRODUCER_FENCED');
      expect(values((await fetchCommitted(leader, topic, 0)).records)).toEqual(['a', 'b', 'c']);
    });

    it('commits a transaction of version 1 with offsets, and refuses a partition never added', async () => {
      const topic = 'tv1';
      const id = 'tv1-producer';
      const group = 'tv1-group';
      expect(await createTopic(leader, topic, 1)).toBe('NONE');
      const { producerId, producerEpoch } = await initProducer(id);
      const to = { transactionalId: id, topic, partition: 0 };
      const batch = {
        producerId,
        producerEpoch,
        baseSequence: 0,
        transactional: true,
        records: [{ key: 'k', value: 'v' }],
      };

      // Produce v11 leaves adding the partition to the client: the leader's check refuses it.
      expect((await produceBatch(leader, 11, to, batch)).error).toBe('TRANSACTION_ABORTABLE');
      const added = await coordinator.send(AddPartitionsToTxn, {
        transactionalId: id,
        producerId,
        producerEpoch,
        topics: [{ name: topic, partitions: [0] }],
      });
      expect(added.resultsByTopic).toEqual([
        { name: topic, resultsByPartition: [{ partitionIndex: 0, error: 'NONE' }] },
      ]);
      expect(await produceBatch(leader, 11, to, batch)).toMatchObject({ error: 'NONE', baseOffset: 0 });

      expect(
        (
          await coordinator.send(AddOffsetsToTxn, {
            transactionalId: id,
            producerId,
            producerEpoch,
            groupId: group,
          })
        ).error,
      ).toBe('NONE');
      const offsets = await commitOffset(
        4,
        { transactionalId: id, producerId, producerEpoch },
        group,
        topic,
        1,
      );
      expect(offsets).toEqual([{ name: topic, resultsByPartition: [{ partitionIndex: 0, error: 'NONE' }] }]);
      expect(await describeTxn(id)).toMatchObject({
        transactionState: 'Ongoing',
        topics: expect.arrayContaining([
          { topic, partitions: [0] },
          { topic: '__consumer_offsets', partitions: [0] },
        ]),
      });

      // EndTxn v4 ends it without bumping the epoch, and answers with no producer id.
      const commit = await coordinator.send(
        EndTxn,
        { transactionalId: id, producerId, producerEpoch, committed: true },
        4,
      );
      expect(commit).toEqual({ throttleTimeMs: 0, error: 'NONE' });
      const committed = await waitFor(
        'the commit marker',
        () => fetchCommitted(leader, topic, 0),
        (v) => v.lastStableOffset === 2,
      );
      expect(values(committed.records)).toEqual(['v']);
      expect(committed.batches.at(-1)).toMatchObject({
        control: true,
        producerEpoch,
        marker: { type: 'COMMIT' },
      });
      expect(
        await waitFor(
          'CompleteCommit',
          () => describeTxn(id),
          (t) => t.transactionState === 'CompleteCommit',
        ),
      ).toMatchObject({
        producerId,
        producerEpoch,
      });
    });

    it('says when it knows no transactional id', async () => {
      expect((await describeTxn('never-used')).error).toBe('TRANSACTIONAL_ID_NOT_FOUND');
    });
  },
);
