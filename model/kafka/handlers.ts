// The request handlers of the brokers, by Kafka API name: the surface a user-defined variant
// overrides. An override receives the default handlers as `ctx.base`, so a small protocol change
// can wrap the default instead of copying it.
import type { KafkaConfig } from './config.ts';
import * as coordinator from './coordinator.ts';
import * as group from './group.ts';
import * as partition from './partition.ts';
import type { Request, State } from './state.ts';

/** The connection a request arrived on; an answer goes back on it. */
export interface Connection {
  readonly from: number;
  readonly to: number;
  readonly conn: number;
}

export interface HandlerContext {
  readonly cfg: KafkaConfig;
  /** The handlers of the generation the variant is based on. */
  readonly base: RequestHandlers;
}

export type RequestHandler = (ctx: HandlerContext, s: State, connection: Connection, req: Request) => State;

export const requestApis = ['InitProducerId', 'AddPartitionsToTxn', 'AddOffsetsToTxn', 'EndTxn', 'Produce', 'WriteTxnMarkers', 'TxnOffsetCommit'] as const;
export type RequestApi = (typeof requestApis)[number];
export type RequestHandlers = Readonly<Record<RequestApi, RequestHandler>>;

export const defaultHandlers: RequestHandlers = {
  InitProducerId: (ctx, s, c, req) => coordinator.handleInitProducerId(ctx.cfg, s, c, req),
  AddPartitionsToTxn: (ctx, s, c, req) => coordinator.handleAddPartitionsToTxn(ctx.cfg.rules, s, c, req),
  AddOffsetsToTxn: (ctx, s, c, req) => coordinator.handleAddPartitionsToTxn(ctx.cfg.rules, s, c, req),
  EndTxn: (ctx, s, c, req) => coordinator.handleEndTxn(ctx.cfg.rules, s, c, req),
  Produce: (ctx, s, c, req) => partition.handleProduce(ctx.cfg.rules, s, c, req),
  WriteTxnMarkers: (ctx, s, c, req) => partition.handleWriteTxnMarkers(ctx.cfg.rules, s, c, req),
  TxnOffsetCommit: (ctx, s, c, req) => group.handleTxnOffsetCommit(ctx.cfg.rules, s, c, req),
};
