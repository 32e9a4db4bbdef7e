// The brokers' default request handlers, by Kafka API name: the surface a user-defined variant
// overrides (the types are in config.ts). An override receives these defaults as `ctx.base`, so
// a small protocol change can wrap the default instead of copying it.
import type { RequestHandlers } from './config.ts';
import * as coordinator from './coordinator.ts';
import * as group from './group.ts';
import * as partition from './partition.ts';
import { defaultClientHandlers } from './producer.ts';

// What a user's override file needs to type its handlers.
export type {
  BatchExpiryHandler,
  ClientContext,
  ClientHandlers,
  HandlerContext,
  RequestApi,
  RequestHandler,
  RequestHandlers,
  RequestTimeoutHandler,
  ResponseHandler,
} from './config.ts';
export { defaultClientHandlers };
export type { Connection } from './network.ts';

export const defaultHandlers: RequestHandlers = {
  InitProducerId: (ctx, s, c, req) => coordinator.handleInitProducerId(ctx.cfg, s, c, req),
  AddPartitionsToTxn: (ctx, s, c, req) => coordinator.handleAddPartitionsToTxn(ctx.cfg, s, c, req),
  AddOffsetsToTxn: (ctx, s, c, req) => coordinator.handleAddPartitionsToTxn(ctx.cfg, s, c, req),
  EndTxn: (ctx, s, c, req) => coordinator.handleEndTxn(ctx.cfg, s, c, req),
  Produce: (ctx, s, c, req) => partition.handleProduce(ctx.cfg.rules, s, c, req),
  WriteTxnMarkers: (ctx, s, c, req) => partition.handleWriteTxnMarkers(ctx.cfg.rules, s, c, req),
  TxnOffsetCommit: (ctx, s, c, req) => group.handleTxnOffsetCommit(ctx.cfg.rules, s, c, req),
};
