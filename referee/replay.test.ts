// Saved traces replayed against a real Kafka broker (referee/replay/): a run the broker takes
// step for step, a generation the broker contradicts, a step one broker cannot take, a broker
// that dies mid-replay, and the command line's refusals.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../checker/cli.ts';
import { readTraceFile } from '../checker/engine/trace.ts';
import type { KafkaConfig } from '../model/kafka/config.ts';
import { loadSpecFile, parseSpec } from '../specs/load.ts';
import { walkRandom } from '../checker/engine/random.ts';
import { conform } from './conform.ts';
import { type Broker, startBroker } from './broker.ts';
import { type KafkaReplayResult, replayOnKafka } from './replay/index.ts';
import { replayOnBroker } from './replay/replay.ts';
import { noTimings, randomLabels, walkTrace } from './replay/walk.ts';
import { TEST_RELEASE, skipWithoutKafka } from './testing.ts';

const SELF_FENCING = 'traces/kafka-3.5-init-producer-id-retry.itf.json';
const STALE_END_TXN = 'traces/kafka-3.5-stale-end-txn.itf.json';
const MARKER_TIMEOUT = 'traces/kafka-3.5-marker-timeout.itf.json';

async function txcheck(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), errIsTTY: false });
  return { code, out, err };
}

function spec(file: string, variant?: string) {
  const trace = readTraceFile(file);
  const raw = variant === undefined ? trace.meta.spec : { ...trace.meta.spec, variant };
  return {
    params: parseSpec(file, raw, '#meta.spec').params,
    labels: trace.actions,
    property: trace.meta.property,
  };
}

describe('replay --kafka refuses', () => {
  it('a broker that cannot be reached: one line, exit 2', async () => {
    const { code, out, err } = await txcheck('replay', '--kafka', '127.0.0.1:1', SELF_FENCING);
    expect(code).toBe(2);
    expect(err).toMatch(
      /^command line: --kafka 127\.0\.0\.1:1: cannot reach a Kafka broker at 127\.0\.0\.1:1: .*\n$/,
    );
    expect(out).not.toContain('Agrees');
  });

  it('--tv or --variant without --kafka, a transaction version out of range, an unknown variant', async () => {
    expect((await txcheck('replay', '--tv', '2', SELF_FENCING)).code).toBe(2);
    expect((await txcheck('replay', '--variant', 'kafka-4.1', SELF_FENCING)).code).toBe(2);
    const tv = await txcheck('replay', '--kafka', TEST_RELEASE, '--tv', '3', SELF_FENCING);
    expect([tv.code, tv.err]).toEqual([
      2,
      'command line: --tv: expected transaction version 1 or 2, got "3"\n',
    ]);
    const variant = await txcheck('replay', '--kafka', TEST_RELEASE, '--variant', 'kafka-9', SELF_FENCING);
    expect(variant.code).toBe(2);
    expect(variant.err).toMatch(
      /^command line: --variant: expected one of kafka-0\.11, .*kafka-4\.1.*, got "kafka-9"\n$/,
    );
  });

  it('a trace of another model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'txcheck-referee-'));
    const trace = join(dir, 'tp3.itf.json');
    expect(
      (await txcheck('check', 'specs/two-phase/tp3-commit-early.json', '--workers', '1', '-o', trace)).code,
    ).toBe(1);
    const { code, err } = await txcheck('replay', '--kafka', '127.0.0.1:1', trace);
    expect(code).toBe(2);
    expect(err).toBe(
      `${trace}: #meta.spec.model: expected a Kafka trace (replay --kafka drives Kafka brokers), got "two-phase"\n`,
    );
  });
});

describe.skipIf(skipWithoutKafka('referee/replay.test.ts'))(`replay against Kafka ${TEST_RELEASE}`, () => {
  let broker: Broker;
  const replay = (file: string, variant?: string): Promise<KafkaReplayResult> =>
    replayOnKafka({ target: broker.address, ...spec(file, variant) });

  beforeAll(async () => {
    broker = await startBroker({ version: TEST_RELEASE, tv: 1 });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('a retried InitProducerId fences its own producer on the broker too', async () => {
    const result = await replay(SELF_FENCING);
    expect(result.status).toBe('agrees');
    expect(result.steps).toHaveLength(readTraceFile(SELF_FENCING).actions.length);
    expect(result.steps.every((s) => s.difference === undefined)).toBe(true);
    expect(result.steps.at(-1)!.did).toBe('answered PRODUCER_FENCED');
    expect(result.violation).toBe('shows');
  });

  it('a stale EndTxn commits the next transaction: the broker agrees with kafka-3.8 step for step', async () => {
    const result = await replay(STALE_END_TXN, 'kafka-3.8');
    expect(result.status).toBe('agrees');
    expect(result.steps.find((s) => s.index === 24)).toMatchObject({
      label: 'deliver P0.0→TC: EndTxn',
      did: "sent EndTxn (Kafka answered NONE); then the broker's own WriteTxnMarkers, WriteTxnMarkers response, completeTransaction",
    });
    // Its markers are written at once, so the later Produce no longer joins the committed transaction.
    expect(result.violation).toBe('gone');
  });

  it('contradicts kafka-3.5, which has no partition verification, at the first late Produce', async () => {
    const result = await replay(STALE_END_TXN);
    expect(result.status).toBe('diverges');
    const last = result.steps.at(-1)!;
    expect(last).toMatchObject({ index: 27, did: 'sent Produce (Kafka answered INVALID_TXN_STATE)' });
    expect(last.difference).toEqual({ what: 'partitions.p0.highWatermark', model: 4, kafka: 3 });
    expect(result.message).toBe(
      'diverges from Kafka at step 27 (deliver P0.0→L0: Produce): partitions.p0.highWatermark: model 4, Kafka 3',
    );
  });

  it("catches a model that skips the coordinator's epoch check (a mutant)", async () => {
    const trace = readTraceFile(SELF_FENCING);
    const raw = {
      ...trace.meta.spec,
      variant: { base: 'kafka-3.8', enable: ['mutantNoCoordinatorEpochCheck'] },
    };
    const result = await replayOnKafka({
      target: broker.address,
      params: parseSpec(SELF_FENCING, raw, '#meta.spec').params,
      labels: trace.actions,
      property: trace.meta.property,
    });
    expect(result.status).toBe('diverges');
    expect(result.steps.at(-1)).toMatchObject({
      index: 9,
      label: 'deliver P0.0→TC#1: AddPartitionsToTxn',
      did: 'sent AddPartitionsToTxn (Kafka answered PRODUCER_FENCED)',
    });
  });

  it('conform: a walk the broker takes otherwise is shrunk, saved, shown, and replayed again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'txcheck-conform-'));
    const specFile = join(dir, 'mutant.json');
    const raw = loadSpecFile('specs/kafka/zombie-fencing.json').raw;
    const variant = { base: 'kafka-3.8', enable: ['mutantNoCoordinatorEpochCheck'] };
    writeFileSync(specFile, JSON.stringify({ ...raw, variant }));
    const out = join(dir, 'walk.itf.json');
    const argv = ['--kafka', broker.address, '--seed', '4', '--walks', '1', '-o', out, '--json'];
    const run = await txcheck('conform', specFile, ...argv);
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.out);
    const [what] = Object.keys(summary.divergences);
    expect(summary).toMatchObject({ divergences: { [what!]: 1 }, traceFiles: [out] });
    expect(summary.notUnderControl.brokerWork).toHaveProperty('WriteTxnMarkers');
    const trace = readTraceFile(out);
    expect(trace.meta).toMatchObject({
      property: 'RefereeAgreement',
      referee: `the broker at ${broker.address}`,
      difference: { step: trace.states.length - 1, what },
    });
    const shown = await txcheck('show', out);
    expect(shown.out).toContain(`Why: At step ${trace.meta.difference!.step} they differ in ${what}`);
    expect(shown.out).toContain(`· the broker at ${broker.address}: sent InitProducerId`);
    expect((await txcheck('replay', out)).code).toBe(0);
    const again = await txcheck('replay', '--kafka', broker.address, '--json', out);
    expect(JSON.parse(again.out)).toMatchObject({ status: 'diverges' });
  });

  it('conform: random runs of a spec agree with the broker, and the same seed gives the same runs', async () => {
    const spec = loadSpecFile('specs/kafka/lossy-network.json');
    const params = parseSpec(spec.file, { ...spec.raw, variant: 'kafka-3.8' }, '').params as KafkaConfig;
    const labels = (walk: number) => randomLabels(params, walkRandom(7, walk), 30);
    expect(labels(3)).toEqual(labels(3));
    expect(labels(3)).not.toEqual(labels(4));
    const result = await conform({ target: broker.address, params, seed: 7, walks: 4, maxDepth: 30 });
    expect(result.walks.map((w) => w.status)).toEqual(['agrees', 'agrees', 'agrees', 'agrees']);
    for (const w of result.walks) expect(w.steps).toBe(labels(w.walk).length);
    const timings = noTimings();
    for (let walk = 0; walk < 4; walk++) randomLabels(params, walkRandom(7, walk), 30, 'broker', timings);
    expect(result.timings).toEqual(timings);
  });

  it('conform: an idempotent producer beside a transactional one gets its id from the broker', async () => {
    const spec = loadSpecFile('specs/kafka/idempotent-beside-transactions.json');
    const params = parseSpec(spec.file, { ...spec.raw, variant: 'kafka-3.8' }, '').params as KafkaConfig;
    expect(randomLabels(params, walkRandom(0, 0), 40)).toContain('I0: initProducerId');
    const result = await conform({ target: broker.address, params, seed: 0, walks: 2, maxDepth: 40 });
    expect(result.walks.map((w) => [w.status, w.message])).toEqual([
      ['agrees', expect.stringMatching(/^agrees with Kafka on every step/)],
      ['agrees', expect.stringMatching(/^agrees with Kafka on every step/)],
    ]);
  });

  it('stops at a marker timeout, which one broker cannot be made to take', async () => {
    const labels = readTraceFile(MARKER_TIMEOUT).actions;
    const at = labels.findIndex((l) => l.includes('markerTimeout')) + 1;
    const result = await replay(MARKER_TIMEOUT, 'kafka-3.8');
    expect(result.status).toBe('unsupported');
    expect(result.steps).toHaveLength(at - 1);
    expect(result.message).toContain(`then stops at step ${at} (${labels[at - 1]}): one broker cannot`);
    expect(result.violation).toBe('not reached');
  });

  it('prints a line per step and the verdict, or one JSON object', async () => {
    const text = await txcheck('replay', '--kafka', broker.address, SELF_FENCING);
    expect(text.code).toBe(0);
    expect(text.out).toContain(
      '    3  deliver P0.0→TC#1: InitProducerId: sent InitProducerId (Kafka answered NONE)\n',
    );
    expect(text.out).toContain(
      `Agrees with the broker at ${broker.address} on every step (10 steps) (transaction.version 1)\n`,
    );
    const json = await txcheck('replay', '--kafka', broker.address, '--json', SELF_FENCING);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({
      status: 'agrees',
      transactionVersion: 1,
      violation: 'shows',
    });
  });
});

describe.skipIf(skipWithoutKafka('referee/replay.test.ts'))('a broker that dies mid-replay', () => {
  it('ends the replay with the steps compared so far', async () => {
    const broker = await startBroker({ version: TEST_RELEASE, tv: 1 });
    try {
      const { params, labels } = spec(STALE_END_TXN, 'kafka-3.8');
      const { steps } = walkTrace(params as KafkaConfig, labels);
      const result = await replayOnBroker({
        address: broker.address,
        cfg: params as KafkaConfig,
        steps,
        onStep: (r) => {
          if (r.index === 5) process.kill(broker.pid, 'SIGKILL');
        },
      });
      expect(result.status).toBe('broker-died');
      // Every step compares the broker's state after it, so the first step after the kill meets the dead broker.
      expect(result.steps.map((s) => s.index)).toEqual([1, 2, 3, 4, 5]);
      expect(result.message).toMatch(/^the broker went away after 5 steps compared: /);
    } finally {
      await broker.stop();
    }
  });
});
