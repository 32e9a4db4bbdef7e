// The visited set of a distributed breadth-first run: the 64-bit fingerprints of its states as
// 8-byte binary members of one Redis set per shard, a shard per Redis server, picked by the
// fingerprint's high word modulo their number.
//
// A job of level d adds its own states (level d) and asks which of its successors are members,
// in one pipelined round trip per shard: SADD and SMISMEMBER take a whole batch as one command,
// so the server does one native loop per batch. A Lua script that inserts and answers which were
// new would cost a call per member inside the script, and a decision the coordinator must take
// anyway: which of two jobs that both meet a new state at this level met it first. So the
// workers only test, and the states a job holds enter the set when their own level is expanded.
// At level d the set holds every state of the levels before d (their jobs are all done) and some
// of level d; the coordinator drops the rest of level d, and the duplicates between jobs, itself.
import { type ChainableCommander, Redis } from 'ioredis';
import { execMarked } from './epoch.ts';
import { RUN_KEY_SECONDS, shardVisitedKey, visitedKey } from './jobs.ts';
import { type RedisAddress, connectionOf } from './redis.ts';

/** Members per command: big enough for one round trip per job, small enough not to hold a server up for long. */
const BATCH = 8192;

export const shardOf = (high: number, shards: number): number => (high >>> 0) % shards;

/** 8 bytes per fingerprint, high word first, so that members compare as the fingerprints do. */
function members(fingerprints: Int32Array, at: readonly number[]): Buffer[] {
  const bytes = Buffer.allocUnsafe(at.length * 8);
  return at.map((pair, i) => {
    bytes.writeInt32BE(fingerprints[2 * pair]!, i * 8);
    bytes.writeInt32BE(fingerprints[2 * pair + 1]!, i * 8 + 4);
    return bytes.subarray(i * 8, i * 8 + 8);
  });
}

/** The pair indices of `fingerprints` per shard. */
function byShard(fingerprints: Int32Array, shards: number): number[][] {
  const lists = Array.from({ length: shards }, (): number[] => []);
  for (let pair = 0; pair < fingerprints.length / 2; pair++)
    lists[shardOf(fingerprints[2 * pair]!, shards)]!.push(pair);
  return lists;
}

/** Clients of the shards' servers, made when first needed and kept for the jobs that follow. */
export class ShardClients {
  private readonly clients = new Map<string, Redis>();

  constructor(private readonly onError: (e: Error) => void) {}

  of(address: RedisAddress): Redis {
    const key = `${address.host}:${address.port}`;
    let client = this.clients.get(key);
    if (client === undefined) {
      client = new Redis(connectionOf(address));
      client.on('error', this.onError);
      this.clients.set(key, client);
    }
    return client;
  }

  disconnect(): void {
    for (const client of this.clients.values()) client.disconnect();
  }
}

/**
 * Adds `own` to the run's visited set and answers, per pair of `candidates`, 1 when it is not a
 * member. Every command also renews the key's expiry, the safety net of a run that never cleans up.
 * Each shard's answer comes with a look at the run's mark there: a shard that lost the set would
 * call every state new (a RedisLost instead).
 */
export async function admit(
  clients: readonly Redis[],
  run: string,
  own: Int32Array,
  candidates: Int32Array,
): Promise<Uint8Array> {
  const key = visitedKey(run);
  const fresh = new Uint8Array(candidates.length / 2);
  const ownByShard = byShard(own, clients.length);
  const candidatesByShard = byShard(candidates, clients.length);
  await Promise.all(
    clients.map(async (client, shard) => {
      const asked = candidatesByShard[shard]!;
      const added = ownByShard[shard]!;
      if (asked.length === 0 && added.length === 0) return;
      const pipeline = client.pipeline();
      for (let i = 0; i < added.length; i += BATCH)
        pipeline.sadd(key, members(own, added.slice(i, i + BATCH)));
      const batches: number[][] = [];
      for (let i = 0; i < asked.length; i += BATCH) {
        batches.push(asked.slice(i, i + BATCH));
        pipeline.smismember(key, members(candidates, batches.at(-1)!));
      }
      pipeline.expire(key, RUN_KEY_SECONDS);
      const replies = await execMarked(client, pipeline, run);
      for (const [e] of replies) if (e !== null) throw e;
      const answers = replies.slice(
        Math.ceil(added.length / BATCH),
        Math.ceil(added.length / BATCH) + batches.length,
      );
      batches.forEach((batch, b) => {
        const isMember = answers[b]![1] as number[];
        batch.forEach((pair, i) => (fresh[pair] = isMember[i] === 1 ? 0 : 1));
      });
    }),
  );
  return fresh;
}

/** The server of shard `shard`. */
export const serverOf = (shard: number, servers: number): number => shard % servers;

/** Adds `fingerprints` (pairs) to the set at `key`, in commands of BATCH members. */
export function addMembers(pipeline: ChainableCommander, key: string, fingerprints: Int32Array): void {
  const pairs = Array.from({ length: fingerprints.length / 2 }, (_, pair) => pair);
  for (let i = 0; i < pairs.length; i += BATCH)
    pipeline.sadd(key, members(fingerprints, pairs.slice(i, i + BATCH)));
}

/**
 * Per pair of `candidates`, 1 when its shard's part of the visited set does not hold it: one
 * pipelined round trip per server, with a look at the run's mark there (a server that lost the
 * set would call every state new).
 */
export async function unvisited(
  clients: readonly Redis[],
  run: string,
  shards: number,
  candidates: Int32Array,
): Promise<Uint8Array> {
  const fresh = new Uint8Array(candidates.length / 2);
  const byOwner = byShard(candidates, shards);
  await Promise.all(
    clients.map(async (client, server) => {
      const batches: number[][] = [];
      const pipeline = client.pipeline();
      for (let shard = server; shard < shards; shard += clients.length) {
        const asked = byOwner[shard]!;
        for (let i = 0; i < asked.length; i += BATCH) {
          batches.push(asked.slice(i, i + BATCH));
          pipeline.smismember(shardVisitedKey(run, shard), members(candidates, batches.at(-1)!));
        }
      }
      if (batches.length === 0) return;
      const replies = await execMarked(client, pipeline, run);
      replies.forEach(([e, isMember], b) => {
        if (e !== null) throw e;
        batches[b]!.forEach((pair, i) => (fresh[pair] = (isMember as number[])[i] === 1 ? 0 : 1));
      });
    }),
  );
  return fresh;
}
