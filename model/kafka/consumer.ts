// Consumers of the data partitions. read_committed fetches up to the LSO and skips the batches of
// aborted transactions (Fetcher / CompletedFetch); read_uncommitted fetches up to the high watermark.
import type { Rules } from './config.ts';
import { batchOutcome, highWatermark, lastStableOffset } from './partition.ts';
import { type Consumer, type Delivered, type State, BatchKind, Outcome, withField } from './state.ts';
import { setAt } from './util.ts';

export function initialConsumer(readCommitted: boolean, partitions: number): Consumer {
  return { readCommitted, position: new Array<number>(partitions).fill(0), delivered: [] };
}

function fetchLimit(rules: Rules, s: State, c: Consumer, p: number): number {
  const part = s.partitions[p]!;
  return c.readCommitted && !rules.mutantReadPastLso ? lastStableOffset(part) : highWatermark(part);
}

/** A fetch only happens when there is something new below the limit. */
export function canFetch(rules: Rules, s: State, ci: number, p: number): boolean {
  const c = s.consumers[ci]!;
  return c.position[p]! < fetchLimit(rules, s, c, p);
}

export function fetch(rules: Rules, s: State, ci: number, p: number): State {
  const c = s.consumers[ci]!;
  const part = s.partitions[p]!;
  const end = fetchLimit(rules, s, c, p);
  const delivered: Delivered[] = [...c.delivered];
  for (let offset = c.position[p]!; offset < end; offset++) {
    const b = part.log[offset]!;
    if (b.kind !== BatchKind.Data) continue; // control batches are never returned
    if (c.readCommitted && batchOutcome(part, offset) === Outcome.Aborted) continue;
    delivered.push({ partition: p, offset, ghostTxn: b.ghostTxn, ghostRecord: b.ghostRecord });
  }
  const next: Consumer = { ...c, position: setAt(c.position, p, end), delivered };
  return withField(s, 'consumers', setAt(s.consumers, ci, next));
}
