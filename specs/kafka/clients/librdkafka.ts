// An alternative client rule set: the transactional producer of librdkafka
// (github.com/confluentinc/librdkafka, tag v2.15.0, commit 9a94e114), where it differs from the
// Java client in ways the model can express. A librdkafka spec sets "client": "kafka-3.6", the
// Java client of the same request versions, and every other reaction is that client's (ctx.base).
// Read at v2.15.0:
//
// - Request versions: EndTxn v0-1 and AddPartitionsToTxn v0 (src/rdkafka_request.c,
//   rd_kafka_EndTxnRequest and rd_kafka_AddPartitionsToTxnRequest), Produce up to v10
//   (src/rdkafka_msgset_writer.c, rd_kafka_ProduceRequest_max_version), TxnOffsetCommit up to v3
//   (src/rdkafka_txnmgr.c). So transaction version 1 only, and a broker answers a partition outside
//   the transaction INVALID_TXN_STATE, not TRANSACTION_ABORTABLE (Produce v11): the Java client of
//   3.6, which the spec names.
// - message.timeout.ms fails only messages waiting in the partition's queues
//   (rdkafka_broker.c, rd_kafka_broker_toppar_msgq_scan); a request in flight fails at
//   socket.timeout.ms, which closes the connection and puts its messages back in the queue (the
//   model's request timeout). So a batch can expire only once its request timed out. Any expiry
//   drains the partitions and bumps the epoch (rd_kafka_idemp_drain_epoch_bump, from the timeout
//   scan of rd_kafka_toppar_producer_serve), an abortable error with a bump for a transactional
//   producer (rdkafka_idempotence.c, rd_kafka_idemp_drain_epoch_bump0). The Java client also
//   fails a batch whose first request is still on its way (delivery.timeout.ms), and with no bump
//   while the transaction completes.
// - INVALID_PRODUCER_EPOCH on a Produce is fatal for a transactional producer ("fenced by newer
//   producer instance", rdkafka_request.c rd_kafka_handle_Produce_error); the Java client makes it
//   abortable since 2.7 (KIP-588).
// - OUT_OF_ORDER_SEQUENCE_NUMBER on the batch next to be acknowledged is fatal ("sequence
//   desynchronization", rd_kafka_handle_idempotent_Produce_error); the Java client makes it
//   abortable with a bump (KIP-360). The model answers it only for the next batch.
//
// Not expressed: a later batch's OUT_OF_ORDER_SEQUENCE_NUMBER, retried after an epoch bump (the
// model has none), and the expiry of a batch between its return to the queue and its re-send
// (the model's request timeout re-sends at once, so the expiry stands for that window).
import type { ClientHandlers } from '../../../model/kafka/handlers.ts';
import { fatal } from '../../../model/kafka/producer.ts';
import { BatchStatus, Err } from '../../../model/kafka/state.ts';
import { setAt } from '../../../model/kafka/util.ts';

const fatalOnProduce: ReadonlySet<number> = new Set([
  Err.INVALID_PRODUCER_EPOCH,
  Err.OUT_OF_ORDER_SEQUENCE_NUMBER,
]);

export const clientOverrides: Partial<ClientHandlers> = {
  batchExpired: (ctx, s, i, partition) => {
    const timedOut = s.producers[i]!.batches.some(
      (b) => b.partition === partition && b.status === BatchStatus.InFlight && b.retried,
    );
    return timedOut ? ctx.base.batchExpired(ctx, s, i, partition) : s;
  },
  Produce: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    const index = p.batches.findIndex(
      (b) => b.partition === resp.partitions && b.seq === resp.seq && b.status === BatchStatus.InFlight,
    );
    if (index < 0 || resp.epoch !== p.epoch || !fatalOnProduce.has(resp.error))
      return ctx.base.Produce(ctx, s, i, resp);
    const batches = p.batches.filter((_, b) => b !== index);
    return fatal(ctx.cfg, { ...s, producers: setAt(s.producers, i, { ...p, batches }) }, i);
  },
};
