// The simulation of many machines adds up: the same inputs give the same prediction, work that
// only the workers do scales with the machines, and a costly coordinator or server bounds the run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Cluster, type Costs, costsOf, jobsOf, simulate } from './simulate.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Workers' work only: nothing else costs anything. */
const free: Costs = {
  workerUs: 40,
  ownShare: 0.1,
  serverUs: 0,
  queueUsPerJob: 0,
  bytesIn: 0,
  bytesOut: 0,
  coordinatorUsPerJob: 0,
  levels: [1, 1_000, 200_000, 400_000, 200_000, 1_000],
};

const cluster = (machines: number): Cluster => ({
  machines,
  cores: 4,
  servers: machines,
  bandwidth: 1.25e9,
  rttUs: 0,
  speed: 1,
});

describe('simulate', () => {
  it('cuts a level as the coordinator does, every state in one job', () => {
    const jobs = jobsOf(100_000, 8);
    expect(jobs.reduce((a, b) => a + b, 0)).toBe(100_000);
    expect(jobs.length).toBeGreaterThanOrEqual(16);
  });

  it('gives the same prediction for the same inputs', () => {
    const costs = { ...free, serverUs: 5, coordinatorUsPerJob: 1000, bytesIn: 1000, bytesOut: 1000 };
    expect(simulate(costs, cluster(8))).toEqual(simulate(costs, cluster(8)));
  });

  it('scales work that only the workers do with the machines, never past their cores', () => {
    const one = simulate(free, cluster(1));
    const four = simulate(free, cluster(4));
    // Every core busy expanding: 16 cores at 40 µs a state.
    const ideal = (16 * 1e6) / free.workerUs;
    expect(four.statesPerSecond).toBeLessThanOrEqual(ideal);
    expect(four.statesPerSecond).toBeGreaterThan(0.85 * ideal);
    expect(four.statesPerSecond / one.statesPerSecond).toBeGreaterThan(3.5);
  });

  it('is bounded by a coordinator that costs more than the workers', () => {
    const slow = { ...free, coordinatorUsPerJob: 200_000 };
    const p = simulate(slow, cluster(8));
    expect(p.busy.coordinator).toBeGreaterThan(0.8);
    expect(p.statesPerSecond).toBeLessThan(simulate(free, cluster(8)).statesPerSecond / 4);
  });

  it('is bounded by one server when every machine shares it', () => {
    const costly = { ...free, serverUs: 40 };
    const p = simulate(costly, { ...cluster(8), servers: 1 });
    expect(p.busy.server).toBeGreaterThan(0.8);
  });

  it('names the row it needs when a bench file lacks it', () => {
    expect(() => costsOf([], 'kafka-redis-1', 'out/bench.json')).toThrow(
      'out/bench.json: rows: expected a distributed row named kafka-redis-1',
    );
  });

  it('answers a bad argument in one line, exit 2', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'checker/bench/simulate.ts', '--cores', 'x'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('command line: --cores: expected a number of at least 1, got "x"\n');
  });
});
