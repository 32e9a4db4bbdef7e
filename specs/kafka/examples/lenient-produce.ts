// A proposed change, written as a user-defined variant: "a leader may accept a Produce from an
// older producer epoch when that producer has no open transaction at the partition; there is
// nothing to fence, and the client is spared an abortable error". The checker shows why not.
import type { RequestHandler } from '../../../model/kafka/handlers.ts';
import { producerEntry } from '../../../model/kafka/partition.ts';
import { NO_OFFSET } from '../../../model/kafka/state.ts';

const Produce: RequestHandler = (ctx, s, connection, req) => {
  const entry = producerEntry(s.partitions[req.partitions]!, req.pid);
  const idle = entry !== undefined && entry.txnFirstOffset === NO_OFFSET && req.epoch < entry.epoch;
  return ctx.base.Produce(ctx, s, connection, idle ? { ...req, epoch: entry.epoch } : req);
};

export const overrides = { Produce };
