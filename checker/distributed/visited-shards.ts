// The visited set of a distributed breadth-first run: the 64-bit fingerprints of its states as
// 8-byte binary members of one Redis set per shard, the shard picked by the fingerprint's high
// word modulo the number of shards, and the shard's server by the shard modulo the number of
// servers.
//
// An expand job of level d asks which of its successors are members, in one pipelined round
// trip per server; the own jobs of level d + 1 add its new states once every expand job of level
// d is done. So the set holds exactly the levels up to d while level d is expanded, and what it
// does not hold is new. SADD and SMISMEMBER take a whole batch as one command, so the server does
// one native loop per batch, where a Lua script would make a call per member.
import { type ChainableCommander, Redis } from 'ioredis';
import { execMarked } from './epoch.ts';
import { shardVisitedKey } from './jobs.ts';
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
