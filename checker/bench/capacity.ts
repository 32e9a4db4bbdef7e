// npm run capacity: what the one-thread search's bookkeeping takes for N states, without a model:
// N distinct fingerprints into the visited set and N entries into the trail, as a search of N
// states makes them. Prints bytes per state and the peak resident memory. It measures; it never
// fails.
//
//   npm run capacity -- [--states N]   (default 100,000,000)
import { parseArgs } from 'node:util';
import { Trail } from '../engine/trail.ts';
import { VisitedSet } from '../engine/visited.ts';

const { values } = parseArgs({ options: { states: { type: 'string', default: '100000000' } } });
const states = Number(values.states);
if (!Number.isSafeInteger(states) || states < 1) {
  process.stderr.write(`--states: expected a whole number of at least 1, got ${values.states}\n`);
  process.exit(2);
}

// Fingerprints spread as a good hash spreads them: a 32-bit mix of the id for each word.
const mix = (x: number): number => {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return x ^ (x >>> 16);
};

const visited = new VisitedSet();
const trail = new Trail();
let peak = 0;
const start = process.hrtime.bigint();
for (let id = 0; id < states; id++) {
  visited.add(mix(id), mix(id ^ 0x5bd1e995));
  trail.set(id, id === 0 ? -1 : id >>> 2, id & 7);
  if ((id & 0xfffff) === 0) peak = Math.max(peak, process.memoryUsage.rss());
}
peak = Math.max(peak, process.memoryUsage.rss());
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
process.stdout.write(
  [
    `${states.toLocaleString('en-US')} states (${visited.size.toLocaleString('en-US')} distinct) in ${seconds.toFixed(1)} s`,
    `visited set: ${mb(visited.bytes)}, ${(visited.bytes / states).toFixed(1)} bytes a state`,
    `trail: ${mb(trail.bytes)}, ${(trail.bytes / states).toFixed(1)} bytes a state`,
    `peak resident: ${mb(peak)}`,
  ].join('\n') + '\n',
);
