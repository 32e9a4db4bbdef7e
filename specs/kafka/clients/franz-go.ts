// An alternative client rule set: the transactional producer of franz-go (github.com/twmb/franz-go,
// package kgo, tag v1.21.5), where it differs from the Java client in ways the model can express.
// Every other reaction is the Java client's (ctx.base). Read at v1.21.5:
//
// - A batch whose request was sent and not answered is never failed by the record timeout: its
//   outcome is unknown, so the client keeps retrying it past every limit (pkg/kgo/sink.go, the
//   record-timeout checks around lines 1047-1054 and 1359-1364; the timeout is unlimited by
//   default, pkg/kgo/config.go 1414-1420). The Java client fails it at delivery.timeout.ms.
// - PRODUCER_FENCED, INVALID_TXN_STATE and TRANSACTION_ABORTABLE on a Produce fail that
//   partition's records only; the producer id and the transaction are left as they were
//   (pkg/kgo/sink.go 1225-1251, 1269-1277), so the application may still commit (the documented
//   choice of pkg/kgo/txn.go 977-983). The Java client makes the transaction abortable.
import type { ClientHandlers } from '../../../model/kafka/handlers.ts';
import { BatchStatus, Err } from '../../../model/kafka/state.ts';

const keepsTransaction: ReadonlySet<number> = new Set([
  Err.PRODUCER_FENCED,
  Err.INVALID_TXN_STATE,
  Err.TRANSACTION_ABORTABLE,
]);

export const clientOverrides: Partial<ClientHandlers> = {
  batchExpired: (_ctx, s) => s,
  Produce: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    const index = p.batches.findIndex(
      (b) => b.partition === resp.partitions && b.seq === resp.seq && b.status === BatchStatus.InFlight,
    );
    if (index < 0 || resp.epoch !== p.epoch || !keepsTransaction.has(resp.error))
      return ctx.base.Produce(ctx, s, i, resp);
    const producers = s.producers.map((q, k) =>
      k === i ? { ...q, batches: q.batches.filter((_, b) => b !== index) } : q,
    );
    return { ...s, producers };
  },
};
