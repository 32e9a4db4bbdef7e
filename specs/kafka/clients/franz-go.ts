// An alternative client rule set: the transactional producer of franz-go (github.com/twmb/franz-go,
// package kgo, tag v1.21.5, commit 1ba5fd24), where it differs from the Java client in ways the
// model can express. Every other reaction is the Java client's (ctx.base). Read at v1.21.5:
//
// - A batch whose request was sent and not answered is never failed by the record timeout: its
//   outcome is unknown, so the client keeps retrying it past every limit (pkg/kgo/sink.go, the
//   record-timeout checks around lines 1047-1054 and 1359-1364; the timeout is unlimited by
//   default, pkg/kgo/config.go 1414-1420). The Java client fails it at delivery.timeout.ms.
// - PRODUCER_FENCED, INVALID_TXN_STATE and TRANSACTION_ABORTABLE on a Produce fail that
//   partition's records only; the producer id and the transaction are left as they were
//   (pkg/kgo/sink.go 1225-1251, 1269-1277), so the application may still commit (the documented
//   choice of pkg/kgo/txn.go 977-983). The Java client makes the transaction abortable.
// - INVALID_PRODUCER_ID_MAPPING and INVALID_PRODUCER_EPOCH fail the producer id, and the next
//   BeginTransaction (or the abort) re-initialises it with a KIP-360 bump when the transaction ran
//   at version 1, or reports it unrecoverable at version 2 (txn.go maybeRecoverProducerID 875-957,
//   the version gate at 922-940; sink.go 1089-1160). OUT_OF_ORDER_SEQUENCE_NUMBER on a Produce
//   fails the producer id for good under both. The 4.x Java client is fatal on the first whatever
//   the version (KAFKA-18019), abortable on the others.
// - EndTransaction gives up on its EndTxn once its request retries run out (20 tries, 30 s,
//   config.go 643 and 892-912; only CONCURRENT_TRANSACTIONS is retried until the caller's context
//   ends, txn.go 984-1027): the error goes to the application with the outcome unconfirmed, and a
//   retriable error does not fail the producer id (txn.go 860-866), so the next transaction starts
//   at the same epoch. The model's request timeout of an EndTxn stands for those retries running
//   out; the copies already sent may still arrive. The Java client waits for the answer.
// - The version opt-in: BeginTransaction takes transaction version 2 when the cluster has it
//   (txn.go 533-535), with no epoch bump, like the model's client with tv2UpgradeBump off, which a
//   franz-go spec sets; an EndTxn of version 1 that notices the upgrade has the producer id
//   reloaded with a bump before the next transaction (txn.go 839-851).
//
// Not expressed: the opt-in is never undone (a downgrade keeps franz-go at version 2, txn.go
// 981-983; the model's client reads it again); the abort that re-initialises the producer id
// without an EndTxn (the coordinator's fence of the open transaction has the same effect); and the
// commit turned into an abort under version 2 when no produce of the transaction succeeded
// (txn.go 730-757), since the model's client does not remember which produces succeeded: both
// end a transaction that has no record, and only the answer to a commit of a transaction the
// coordinator never saw differs.
import type { ClientContext, ClientHandlers } from '../../../model/kafka/handlers.ts';
import type { KafkaConfig } from '../../../model/kafka/config.ts';
import { connSlot } from '../../../model/kafka/network.ts';
import { fatal, leaveTransactionUnconfirmed } from '../../../model/kafka/producer.ts';
import { type Producer, type State, Api, BatchStatus, Err, TC_NODE, Tm } from '../../../model/kafka/state.ts';
import { setAt } from '../../../model/kafka/util.ts';

const keepsTransaction: ReadonlySet<number> = new Set([
  Err.PRODUCER_FENCED,
  Err.INVALID_TXN_STATE,
  Err.TRANSACTION_ABORTABLE,
]);

/** The errors that fail the producer id, recoverable at version 1 only. */
const recoverableAtVersion1: ReadonlySet<number> = new Set([
  Err.INVALID_PRODUCER_ID_MAPPING,
  Err.INVALID_PRODUCER_EPOCH,
]);

const versionOneRules = new WeakMap<KafkaConfig, KafkaConfig>();

/**
 * The Java client's reactions with its KIP-360 recovery from INVALID_PRODUCER_ID_MAPPING (the 2.5
 * to 3.9 rule), which is what franz-go does in a version-1 transaction.
 */
function recovering(ctx: ClientContext): ClientContext {
  let cfg = versionOneRules.get(ctx.cfg);
  if (cfg === undefined) {
    const clientRules = ctx.cfg.clientRules.map((r) => ({ ...r, invalidPidMappingFatal: false }));
    versionOneRules.set(ctx.cfg, (cfg = { ...ctx.cfg, clientRules }));
  }
  return { ...ctx, cfg };
}

function takesVersion2(ctx: ClientContext, s: State, p: Producer): boolean {
  return ctx.cfg.clientRules[p.instance]!.tv2 && s.transactionVersion === 2;
}

export const clientOverrides: Partial<ClientHandlers> = {
  batchExpired: (_ctx, s) => s,
  Produce: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    const index = p.batches.findIndex(
      (b) => b.partition === resp.partitions && b.seq === resp.seq && b.status === BatchStatus.InFlight,
    );
    if (index < 0 || resp.epoch !== p.epoch) return ctx.base.Produce(ctx, s, i, resp);
    const batches = p.batches.filter((_, b) => b !== index);
    if (keepsTransaction.has(resp.error)) {
      const producers = s.producers.map((q, k) => (k === i ? { ...q, batches } : q));
      return { ...s, producers };
    }
    const lost =
      resp.error === Err.OUT_OF_ORDER_SEQUENCE_NUMBER ||
      (recoverableAtVersion1.has(resp.error) && p.transactionV2);
    if (lost) return fatal(ctx.cfg, { ...s, producers: setAt(s.producers, i, { ...p, batches }) }, i);
    if (recoverableAtVersion1.has(resp.error)) return ctx.base.Produce(recovering(ctx), s, i, resp);
    return ctx.base.Produce(ctx, s, i, resp);
  },
  AddPartitionsToTxn: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    if (resp.error !== Err.INVALID_PRODUCER_ID_MAPPING || p.transactionV2)
      return ctx.base.AddPartitionsToTxn(ctx, s, i, resp);
    return ctx.base.AddPartitionsToTxn(recovering(ctx), s, i, resp);
  },
  AddOffsetsToTxn: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    if (resp.error !== Err.INVALID_PRODUCER_ID_MAPPING || p.transactionV2)
      return ctx.base.AddOffsetsToTxn(ctx, s, i, resp);
    return ctx.base.AddOffsetsToTxn(recovering(ctx), s, i, resp);
  },
  EndTxn: (ctx, s, i, resp) => {
    const p = s.producers[i]!;
    // EndTransaction returns the error; the producer id is reloaded at the next begin, or is lost.
    if (recoverableAtVersion1.has(resp.error))
      return p.transactionV2 ? fatal(ctx.cfg, s, i) : leaveTransactionUnconfirmed(ctx.cfg, s, i, true);
    const next = ctx.base.EndTxn(ctx, s, i, resp);
    const q = next.producers[i]!;
    if (resp.error !== Err.NONE || p.transactionV2 || q.tm !== Tm.READY || !takesVersion2(ctx, s, p))
      return next;
    // "end transaction noticed the cluster now supports KIP-890p2, reloading the producer ID".
    return {
      ...next,
      producers: setAt(next.producers, i, { ...q, tm: Tm.INITIALIZING, bumpRequired: true }),
    };
  },
  requestTimeout: (ctx, s, i) => {
    const p = s.producers[i]!;
    if (p.request?.api !== Api.EndTxn) return ctx.base.requestTimeout(ctx, s, i);
    const slot = connSlot(TC_NODE);
    const closed: Producer = { ...p, conns: setAt(p.conns, slot, p.conns[slot]! + 1) };
    return leaveTransactionUnconfirmed(ctx.cfg, { ...s, producers: setAt(s.producers, i, closed) }, i, false);
  },
};
