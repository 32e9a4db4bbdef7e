// A model request as the bytes a Java client of the same rules would send: the API version
// follows what the request says it supports (transaction version 2: Produce v12, EndTxn v5;
// TRANSACTION_ABORTABLE, KIP-890's client side: Produce v11, EndTxn v4; else the versions of a
// 3.x client before KIP-890), and producer ids are the broker's.
import { type Request, Api, Supports, apiName } from '../../model/kafka/state.ts';
import type { Connection } from '../driver/connection.ts';
import { produceBatch } from '../driver/driver.ts';
import { AddOffsetsToTxn, AddPartitionsToTxn, EndTxn, InitProducerId } from '../driver/messages.ts';
import type { BrokerNames, ProducerIds } from './observe.ts';

/** What a broker's answer says, in the terms the model's responses use. */
export interface Answer {
  readonly api: string;
  readonly error: string;
  /** The producer id and epoch the answer carries (InitProducerId, EndTxn v5), the broker's. */
  readonly producerId?: number;
  readonly producerEpoch?: number;
}

/** Longer than any replay: the broker must never abort a transaction on its own clock. */
const TRANSACTION_TIMEOUT_MS = 900_000;

interface Versions {
  readonly produce: number;
  readonly endTxn: number;
  readonly initProducerId: number;
  readonly addOffsetsToTxn: number;
}
function versionsFor(req: Request): Versions {
  if ((req.supports & Supports.TransactionVersion2) !== 0)
    return { produce: 12, endTxn: 5, initProducerId: 5, addOffsetsToTxn: 4 };
  if ((req.supports & Supports.TransactionAbortable) !== 0)
    return { produce: 11, endTxn: 4, initProducerId: 5, addOffsetsToTxn: 4 };
  return { produce: 10, endTxn: 3, initProducerId: 4, addOffsetsToTxn: 3 };
}

/** The APIs a replay can send for a client; the others stop it (see `unsupported`). */
export const CLIENT_APIS: ReadonlySet<number> = new Set([
  Api.InitProducerId,
  Api.AddPartitionsToTxn,
  Api.EndTxn,
  Api.Produce,
]);

/** The partitions of a bit set, lowest first. */
function partitionsOf(mask: number): number[] {
  const out: number[] = [];
  for (let p = 0; mask >> p !== 0; p++) if ((mask >> p) & 1) out.push(p);
  return out;
}

/** Sends the model's request `req` on `connection` and reads the broker's answer. */
export async function sendRequest(
  connection: Connection,
  req: Request,
  names: BrokerNames,
  ids: ProducerIds,
  transactionTimeoutMs = TRANSACTION_TIMEOUT_MS,
): Promise<Answer> {
  const v = versionsFor(req);
  const api = apiName[req.api]!;
  const transactionalId = req.txnId < 0 ? null : names.transactionalId(req.txnId);
  const producerId = ids.broker(req.pid);
  const producerEpoch = req.epoch;
  switch (req.api) {
    case Api.InitProducerId: {
      const a = await connection.send(
        InitProducerId,
        { transactionalId, transactionTimeoutMs, producerId, producerEpoch },
        v.initProducerId,
      );
      return { api, error: a.error, producerId: a.producerId, producerEpoch: a.producerEpoch };
    }
    case Api.AddPartitionsToTxn: {
      const a = await connection.send(AddPartitionsToTxn, {
        transactionalId: transactionalId!,
        producerId,
        producerEpoch,
        topics: [{ name: names.topic, partitions: partitionsOf(req.partitions) }],
      });
      const errors = [...new Set(a.resultsByTopic.flatMap((t) => t.resultsByPartition.map((p) => p.error)))];
      return { api, error: errors.join(' / ') };
    }
    case Api.AddOffsetsToTxn: {
      const a = await connection.send(
        AddOffsetsToTxn,
        { transactionalId: transactionalId!, producerId, producerEpoch, groupId: `${names.topic}-group` },
        v.addOffsetsToTxn,
      );
      return { api, error: a.error };
    }
    case Api.EndTxn: {
      const a = await connection.send(
        EndTxn,
        { transactionalId: transactionalId!, producerId, producerEpoch, committed: req.commit },
        v.endTxn,
      );
      return { api, error: a.error, producerId: a.producerId, producerEpoch: a.producerEpoch };
    }
    case Api.Produce: {
      const a = await produceBatch(
        connection,
        v.produce,
        { transactionalId, topic: names.topic, partition: req.partitions },
        {
          producerId,
          producerEpoch,
          baseSequence: req.seq,
          transactional: transactionalId !== null,
          records: [{ key: null, value: `${req.ghostTxn}/${req.ghostRecord}` }],
        },
      );
      return { api, error: a.error };
    }
    default:
      throw new Error(`a replay does not send ${api}`);
  }
}
