// What one Redis server sustains as the visited set of a distributed breadth-first search, with
// the commands a worker sends (visited-shards.ts): new fingerprints inserted per second (as an own
// job adds them), and fingerprints already there tested per second (as an expand job asks), for a few batch sizes and clients at once; and
// the bytes the set takes per fingerprint. Random fingerprints, as a run's are. Its keys are
// deleted at the end.
//
//   npx tsx checker/bench/redis-visited.ts redis://127.0.0.1:6379 [--fingerprints N]
import { randomInt, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { epochKey, markServer } from '../distributed/epoch.ts';
import { shardVisitedKey } from '../distributed/jobs.ts';
import { connectionOf, redisAddress } from '../distributed/redis.ts';
import { addMembers, unvisited } from '../distributed/visited-shards.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { fingerprints: { type: 'string', default: '2000000' } },
});
const address = redisAddress(positionals[0] ?? 'redis://127.0.0.1:6379', 'command line', 'URL');
const total = Number(values.fingerprints);
const fingerprints = new Int32Array(total * 2);
for (let i = 0; i < fingerprints.length; i++) fingerprints[i] = randomInt(-(2 ** 31), 2 ** 31);

const clients = [new Redis(connectionOf(address)), new Redis(connectionOf(address))];
const usedMemory = async (): Promise<number> =>
  Number(/used_memory:(\d+)/.exec(await clients[0]!.info('memory'))![1]);

/** Sends the fingerprints in batches of `batch`, `concurrency` batches at once on as many clients; per second. */
async function rate(
  batch: number,
  concurrency: number,
  send: (client: Redis, pairs: Int32Array) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    clients.slice(0, concurrency).map(async (client) => {
      for (let at = next; at < total; at = next) {
        next += batch;
        await send(client, fingerprints.subarray(2 * at, 2 * Math.min(total, at + batch)));
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

const rows: string[] = [];
for (const batch of [1024, 8192]) {
  for (const concurrency of [1, 2]) {
    const run = randomUUID();
    await markServer(clients[0]!, run);
    const before = await usedMemory();
    const inserted = await rate(batch, concurrency, (client, pairs) => {
      const pipeline = client.pipeline();
      addMembers(pipeline, shardVisitedKey(run, 0), pairs);
      return pipeline.exec();
    });
    const bytes = (await usedMemory()) - before;
    const tested = await rate(batch, concurrency, (client, pairs) => unvisited([client], run, 1, pairs));
    await clients[0]!.del(shardVisitedKey(run, 0), epochKey(run));
    rows.push(
      `| ${batch} | ${concurrency} | ${Math.round(inserted).toLocaleString('en-US')} | ${Math.round(tested).toLocaleString('en-US')} | ${(bytes / total).toFixed(1)} |`,
    );
  }
}
console.log(`${total.toLocaleString('en-US')} random fingerprints on ${address.url}\n`);
console.log(
  '| batch | clients | new fingerprints/s | seen fingerprints tested/s | bytes per fingerprint |\n|---|---|---|---|---|',
);
console.log(rows.join('\n'));
for (const client of clients) client.disconnect();
