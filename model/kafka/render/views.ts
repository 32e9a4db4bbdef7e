// Reading a Kafka trace's views, for the steps, tables and explanations: the typed view, the
// leader of a partition, the markers that end transactions, a transaction in a few words.
import type { View } from '../../../checker/report/renderer.ts';
import type { KafkaView, LogEntryView, PartitionView, TransactionView } from '../view.ts';

export const kafka = (v: View): KafkaView => v as unknown as KafkaView;

/** The leader of a partition: L<n>, or GC for the group's __consumer_offsets. */
export function leaderOf(partition: string): string {
  return partition === '__consumer_offsets' ? 'GC' : `L${partition.slice(1)}`;
}

export const isMarker = (e: LogEntryView) => e.kind === 'Commit' || e.kind === 'Abort';

/** The marker that ended the transaction of the record at `offset`, if any (as the leader decides it). */
export function endingMarker(part: PartitionView, offset: number): LogEntryView | undefined {
  const pid = part.log[offset]!.pid;
  return part.log.slice(offset + 1).find((e) => isMarker(e) && e.pid === pid);
}

/** A transaction as the coordinator holds it in memory, in a few words. */
export function txnText(t: TransactionView): string {
  if (!t.known) return 'unknown';
  const pending = t.pendingState === 'none' ? '' : ` (pending ${t.pendingState})`;
  return `${t.state}${pending} pid ${t.producerId} epoch ${t.producerEpoch} [${t.partitions.join(', ')}]`;
}
