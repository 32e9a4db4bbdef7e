// The state tables of a Kafka trace: each partition's log with its HW and LSO, the coordinator's
// transactions beside their __transaction_state records, and the producers' client state.
import type { Table, View } from '../../../checker/report/renderer.ts';
import type { LogEntryView, PartitionView } from '../view.ts';
import { endingMarker, isMarker, kafka, leaderOf, txnText } from './views.ts';

function outcomeText(part: PartitionView, e: LogEntryView): string {
  if (isMarker(e) || !e.transactional) return '';
  const marker = endingMarker(part, e.offset);
  if (marker === undefined) return 'open';
  return `${marker.kind === 'Commit' ? 'committed' : 'aborted'} by ${marker.offset}`;
}

function partitionTable(part: PartitionView): Table {
  const open = part.producers
    .filter((e) => e.currentTxnFirstOffset >= 0)
    .map((e) => `pid ${e.pid} open from offset ${e.currentTxnFirstOffset}`);
  const { highWatermark: hw, lastStableOffset: lso } = part;
  const rows = part.log.map((e) => ({
    cells: [
      String(e.offset),
      e.kind === 'Data'
        ? e.transactional
          ? 'data'
          : 'data (non-transactional)'
        : isMarker(e)
          ? `${e.kind.toUpperCase()} marker`
          : `offset commit ${e.value}`,
      String(e.pid),
      String(e.epoch),
      isMarker(e) ? '' : String(e.sequence),
      outcomeText(part, e),
      isMarker(e) ? '' : `${e.clientTransaction} r${e.record}`,
    ],
    marks: e.offset === lso && lso < hw ? ['LSO'] : [],
  }));
  rows.push({
    cells: [String(hw), '(log end)', '', '', '', '', ''],
    marks: lso === hw ? ['HW', 'LSO'] : ['HW'],
  });
  return {
    id: `log:${part.name}`,
    title: `${part.name} log at ${leaderOf(part.name)}: HW ${hw}, LSO ${lso}${open.length > 0 ? `; ${open.join(', ')}` : ''}`,
    columns: ['offset', 'batch', 'pid', 'epoch', 'seq', 'transaction', 'client txn'],
    rows,
    focus: true,
  };
}

export function tables(state: View): Table[] {
  const s = kafka(state);
  const tc = s.coordinator;
  return [
    ...s.partitions.map(partitionTable),
    {
      id: 'tc',
      title: `TC transactions (coordinator epoch ${tc.coordinatorEpoch}) and __transaction_state`,
      columns: ['transactional.id', 'in memory', 'last log record', 'client txn'],
      rows: tc.transactions.map((t, i) => {
        const r = tc.transactionLog[i]!;
        const logged = r.written
          ? `${r.state} pid ${r.producerId} epoch ${r.producerEpoch} [${r.partitions.join(', ')}]`
          : 'none';
        return {
          cells: [t.transactionalId, txnText(t), logged, t.known ? t.clientTransaction : ''],
          marks: [],
        };
      }),
      focus: false,
    },
    {
      id: 'producers',
      title: 'Producer instances',
      columns: ['instance', 'status', 'client state', 'pid', 'epoch', 'in flight', 'batches'],
      rows: s.producers.map((p) => ({
        cells: [
          p.name,
          p.status,
          p.state,
          String(p.pid),
          String(p.epoch),
          p.inFlightRequest,
          p.batches.map((b) => `${b.partition} seq ${b.sequence} ${b.status}`).join(', '),
        ],
        marks: [],
      })),
      focus: false,
    },
    ...(s.idempotentProducers === undefined
      ? []
      : [
          {
            id: 'idempotent',
            title: 'Idempotent producers (no transactional.id)',
            columns: ['producer', 'pid', 'epoch', 'sequences', 'batches'],
            rows: s.idempotentProducers.map((p) => ({
              cells: [
                p.name,
                String(p.pid),
                p.fatal ? `${p.epoch} (FATAL)` : String(p.epoch),
                p.sequences
                  .map(
                    (q) =>
                      `${q.partition}: next ${q.nextSequence}, acked ${q.lastAckedSequence} (epoch ${q.epoch})`,
                  )
                  .join('; '),
                p.batches
                  .map(
                    (b) =>
                      `record ${b.record} → ${b.partition} ${b.status}${b.sequence < 0 ? '' : ` seq ${b.sequence} epoch ${b.epoch}`}`,
                  )
                  .join(', '),
              ],
              marks: [],
            })),
            focus: false,
          },
        ]),
  ];
}
