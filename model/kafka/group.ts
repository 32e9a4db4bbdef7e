// The group coordinator of the consume-transform-produce app: member joins (each a rebalance
// that bumps the generation), TxnOffsetCommit written to __consumer_offsets as a transactional
// batch (made real by a COMMIT marker, dropped by ABORT), and OffsetFetch with requireStable.
import { type Rules, forRequest } from './config.ts';
import type { Connection } from './network.ts';
import {
  answerClient,
  appendNonTransactional,
  appendDataBatch,
  asksCoordinator,
  batchOutcome,
  guardHolds,
  staleBeforeGuard,
  hasOngoingTransaction,
  newEntry,
  producerEntry,
  startVerification,
} from './partition.ts';
import {
  type LogBatch,
  type Partition,
  type Request,
  type State,
  BatchKind,
  Err,
  NO_OFFSET,
  Outcome,
  withField,
} from './state.ts';

/** A member joins the group: a rebalance moves the group to a new generation. */
export function joinGroup(s: State): { state: State; generation: number } {
  const generation = s.group!.generation + 1;
  return { state: withField(s, 'group', { generation }), generation };
}

/**
 * TxnOffsetCommit (GroupCoordinator.handleTxnCommitOffsets). KIP-890 verifies (4.0: adds) the
 * __consumer_offsets partition first, as it does a data partition (3.7, KAFKA-15449).
 */
export function handleTxnOffsetCommit(brokers: Rules, s: State, connection: Connection, req: Request): State {
  const rules = forRequest(brokers, req);
  const entry = producerEntry(s.partitions[req.partitions]!, req.pid) ?? newEntry(req.pid);
  const asks = rules.tv2 || (asksCoordinator(rules) && rules.verifyOffsetCommit);
  if (asks && !hasOngoingTransaction(rules, entry, req.epoch))
    return startVerification(rules, s, connection, req);
  return appendOffsetCommit(rules, s, connection, req, null);
}

/**
 * doTxnCommitOffsets, after any verification (3.7+): KIP-447 (2.5) fences a member of an older
 * generation with ILLEGAL_GENERATION; then the batch is appended with coordinator origin: the
 * producer epoch is checked, sequences are not.
 */
export function appendOffsetCommit(
  rules: Rules,
  s: State,
  connection: Connection,
  req: Request,
  guard: number | null,
): State {
  if (rules.kip447 && req.generation !== s.group!.generation)
    return answerClient(s, connection, req, Err.ILLEGAL_GENERATION);
  const p = req.partitions;
  const part = s.partitions[p]!;
  const entry = producerEntry(part, req.pid) ?? newEntry(req.pid);
  if (staleBeforeGuard(rules, entry, req))
    return answerClient(s, connection, req, Err.INVALID_PRODUCER_EPOCH);
  if (!guardHolds(rules, part, entry, req, guard))
    return answerClient(s, connection, req, Err.INVALID_TXN_STATE);
  if (req.epoch < entry.epoch) return answerClient(s, connection, req, Err.INVALID_PRODUCER_EPOCH);
  if (rules.mutantOffsetsOutsideTransaction)
    return answerClient(appendNonTransactional(s, p, offsetCommit(req, false)), connection, req, Err.NONE);
  return answerClient(appendDataBatch(s, p, entry, offsetCommit(req, true)), connection, req, Err.NONE);
}

function offsetCommit(req: Request, transactional: boolean): LogBatch {
  return {
    kind: BatchKind.OffsetCommit,
    pid: req.pid,
    epoch: req.epoch,
    seq: -1,
    transactional,
    value: req.value,
    ghostTxn: req.ghostTxn,
    ghostRecord: -1,
  };
}

/** The group's committed input offset: the last offset commit a COMMIT marker made real. */
export function committedOffset(offsets: Partition): number {
  for (let o = offsets.log.length - 1; o >= 0; o--) {
    const b = offsets.log[o]!;
    if (
      b.kind === BatchKind.OffsetCommit &&
      (!b.transactional || batchOutcome(offsets, o) === Outcome.Committed)
    )
      return b.value;
  }
  return 0;
}

/** OffsetFetch(requireStable) answers UNSTABLE_OFFSET_COMMIT while offsets are pending (KIP-447). */
export function hasPendingOffsets(offsets: Partition): boolean {
  return offsets.producers.some((e) => e.txnFirstOffset !== NO_OFFSET);
}
