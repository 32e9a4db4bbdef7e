// Real Kafka brokers on demand: one release's jars resolved with Maven (referee/pom.xml), and a
// single-node KRaft broker+controller on 127.0.0.1 with free ports, a temporary log dir, one
// replica for every internal topic, and the transaction.version asked for.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from './driver/connection.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const POM = join(root, 'referee', 'pom.xml');
/** Where `fetch` writes each release's classpath; the jars themselves stay in the Maven cache. */
const CACHE = join(root, 'out', 'kafka');
const ARTIFACT = 'org.apache.kafka:kafka_2.13';

/** Bad input or a missing prerequisite: the command prints the message alone and exits 2. */
export class BrokerSetupError extends Error {}

export function checkVersion(version: string): string {
  if (!/^\d+\.\d+\.\d+$/.test(version))
    throw new BrokerSetupError(`not a Kafka release version: ${version} (expected e.g. 4.1.1)`);
  return version;
}

function pomDigest(): string {
  return createHash('sha256').update(readFileSync(POM)).digest('hex');
}

function classpathFile(version: string): string {
  return join(CACHE, version, 'classpath.txt');
}

/**
 * The cached classpath of a release, or undefined when it was never fetched, the pom changed
 * since, or a jar left the Maven cache. The file's first line is the pom's digest.
 */
export function cachedClasspath(version: string): string | undefined {
  if (!existsSync(POM))
    throw new BrokerSetupError(
      `starting Kafka ${version} needs a clone of txcheck (its referee/pom.xml); give a running broker's HOST:PORT instead`,
    );
  const file = classpathFile(checkVersion(version));
  if (!existsSync(file)) return undefined;
  const [digest, classpath] = readFileSync(file, 'utf8').split('\n');
  if (digest !== pomDigest() || classpath === undefined || classpath === '') return undefined;
  return classpath.split(':').every((jar) => existsSync(jar)) ? classpath : undefined;
}

/** Whether java and mvn are on the PATH. */
export function haveJavaAndMaven(): boolean {
  return ['java', 'mvn'].every((tool) => spawnSync(tool, ['-version'], { stdio: 'ignore' }).status === 0);
}

export interface Fetched {
  readonly classpath: string;
  /** False when the cached classpath was still good and Maven did not run. */
  readonly resolved: boolean;
}

/** Resolves a release's jars with Maven into ~/.m2 and records its classpath under out/kafka/. */
export function fetchRelease(version: string): Fetched {
  const cached = cachedClasspath(version);
  if (cached !== undefined) return { classpath: cached, resolved: false };
  const output = join(CACHE, version, 'classpath.resolved');
  mkdirSync(dirname(output), { recursive: true });
  const mvn = spawnSync(
    'mvn',
    [
      '-B',
      '-q',
      '-f',
      POM,
      `-Dkafka.version=${version}`,
      'dependency:build-classpath',
      `-Dmdep.outputFile=${output}`,
    ],
    { encoding: 'utf8' },
  );
  if (mvn.error !== undefined)
    throw new BrokerSetupError(
      `cannot resolve ${ARTIFACT}:${version}: mvn did not run (${mvn.error.message})`,
    );
  if (mvn.status !== 0) {
    const log = (mvn.stdout + mvn.stderr).replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
    const reason =
      /Could not resolve dependencies for project [^:]+:[^:]+:[^:]+:[^:]+: (.*?)(?: -> \[Help|$)/m.exec(
        log,
      )?.[1];
    const firstError = /^\[ERROR\] (.+)$/m.exec(log)?.[1];
    throw new BrokerSetupError(
      `cannot resolve ${ARTIFACT}:${version} with Maven: ${reason ?? firstError ?? `mvn exited with ${mvn.status}`}`,
    );
  }
  const classpath = readFileSync(output, 'utf8').trim();
  rmSync(output);
  writeFileSync(classpathFile(version), `${pomDigest()}\n${classpath}\n`);
  return { classpath, resolved: true };
}

/** `n` distinct free ports of 127.0.0.1, held open together so that none is handed out twice. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.on('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** A KRaft cluster id: 16 random bytes in URL-safe base64, as Uuid.randomUuid() makes them. */
export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id; // Kafka refuses ids that read as command-line flags
  }
}

export interface BrokerOptions {
  readonly version: string;
  /** The transaction.version to finalize (0, 1 or 2); the release's default when absent. */
  readonly tv?: number;
  /** More server.properties, over the defaults below. */
  readonly config?: Readonly<Record<string, string>>;
  /** How long to wait for the broker to serve. */
  readonly startTimeoutMs?: number;
  /**
   * HOST:PORT the broker gives clients and the other brokers for itself (a proxy in front of it,
   * referee/proxy.ts): its own markers and verification requests then go there too.
   */
  readonly advertise?: string;
}

export interface Broker {
  /** 127.0.0.1:PORT of the PLAINTEXT listener. */
  readonly address: string;
  readonly version: string;
  /** The transaction.version the broker finalized (0 when it finalized none). */
  readonly transactionVersion: number;
  readonly pid: number;
  /** The broker's own log (its stdout and stderr). */
  readonly logFile: string;
  /** Settles when the JVM has exited, stopped or not. */
  readonly exited: Promise<void>;
  /** Stops the JVM (SIGTERM, then SIGKILL after a bound) and removes the log dir. */
  stop(): Promise<void>;
}

/** The JVM's flags for one Kafka process: a small heap and a cheap collector, for 2 shared cores. */
export function jvmOptions(heapMb: number): string[] {
  return [
    '-Xms64m',
    `-Xmx${heapMb}m`,
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
  ];
}
const STOP_GRACE_MS = 15_000;

/** One KRaft node (broker and controller) of `replicas` in all, as a server.properties file. */
export function kraftProperties(node: {
  readonly dir: string;
  readonly id: number;
  readonly voters: string;
  readonly port: number;
  readonly controllerPort: number;
  /** host:port clients are told to use (a proxy in front of the node). */
  readonly advertised: string;
  readonly replicas: number;
  readonly extra: Readonly<Record<string, string>>;
}): string {
  const { replicas } = node;
  const minIsr = String(Math.min(2, replicas));
  const config: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': String(node.id),
    'controller.quorum.voters': node.voters,
    listeners: `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${node.advertised}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': join(node.dir, 'data'),
    'auto.create.topics.enable': 'false',
    'num.partitions': '1',
    'default.replication.factor': String(replicas),
    'min.insync.replicas': minIsr,
    'offsets.topic.replication.factor': String(replicas),
    'offsets.topic.num.partitions': '1',
    'transaction.state.log.replication.factor': String(replicas),
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': '1',
    'group.initial.rebalance.delay.ms': '0',
    // Timed-out transactions are aborted within a second rather than ten.
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
    'num.network.threads': '1',
    'num.io.threads': '2',
    ...node.extra,
  };
  return Object.entries(config)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

/** Live brokers of this process, killed outright if it exits without stopping them. */
const live = new Map<number, string>();
process.on('exit', () => {
  for (const [pid, dir] of live) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

export function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * A shell that waits on a pipe from this process and, when the pipe closes without being told
 * otherwise (this process was killed, even with SIGKILL), stops the broker and removes its dir.
 */
function startWatchdog(pid: number, dir: string): ChildProcess {
  const script =
    'read _; kill -TERM "$1" 2>/dev/null; i=0; ' +
    'while kill -0 "$1" 2>/dev/null && [ $i -lt 75 ]; do sleep 0.2; i=$((i+1)); done; ' +
    'kill -KILL "$1" 2>/dev/null; rm -rf "$2"';
  const watchdog = spawn('sh', ['-c', script, 'sh', String(pid), dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  watchdog.unref();
  (watchdog.stdin as Socket).unref();
  return watchdog;
}

/** Runs a command to its end, without blocking this process meanwhile. */
function run(
  command: string,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (e) => reject(new BrokerSetupError(`cannot run ${command}: ${e.message}`)));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The first line of a Java tool's failure that is not a stack frame, without the exception's class. */
function cause(run: { stdout: string; stderr: string; status: number | null }): string {
  const lines = (run.stderr + run.stdout)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\s+(at |\.\.\. )/.test(l));
  const thrown = lines.find((l) => /Exception|Error/.test(l));
  return (thrown ?? lines.at(-1) ?? `exit ${run.status}`).replace(/^.*?(?:Exception|Error)[^:]*: /, '');
}

/** Asks ApiVersions until the broker answers and knows its finalized features. */
export async function waitUntilServing(
  address: string,
  exited: () => boolean,
  deadline: number,
): Promise<Connection> {
  for (;;) {
    if (exited()) throw new Error('the broker exited while starting');
    if (Date.now() > deadline) throw new Error('the broker did not serve in time');
    try {
      const connection = await Connection.open(address, { requestTimeoutMs: 5000 });
      if (connection.apiVersions!.finalizedFeaturesEpoch >= 0) return connection;
      connection.close();
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Formats a node's log dir for `cluster`, with `transaction.version` finalized when asked. */
export async function formatStorage(
  version: string,
  java: string[],
  properties: string,
  cluster: string,
  tv: number | undefined,
): Promise<void> {
  const feature = tv === undefined ? [] : ['--feature', `transaction.version=${tv}`];
  const format = await run('java', [
    ...java,
    'kafka.tools.StorageTool',
    'format',
    '-t',
    cluster,
    '-c',
    properties,
    ...feature,
  ]);
  if (format.status !== 0)
    throw new BrokerSetupError(`cannot format a Kafka ${version} log dir: ${cause(format)}`);
}

/** One running Kafka JVM. */
export interface KafkaProcess {
  readonly pid: number;
  /** Settles when the JVM has exited. */
  readonly exited: Promise<void>;
  hasExited(): boolean;
  /** SIGTERM (a controlled shutdown), then SIGKILL after a bound; `dir` is left in place. */
  stop(): Promise<void>;
  /** SIGKILL at once; `dir` is left in place. */
  kill(): Promise<void>;
}

/**
 * Starts `kafka.Kafka` on a properties file, its output appended to `logFile`. Should this
 * process die first, whatever the signal, the JVM is killed and `dir` removed.
 */
export function spawnKafka(java: string[], properties: string, logFile: string, dir: string): KafkaProcess {
  const out = openSync(logFile, 'a');
  const child = spawn('java', [...java, 'kafka.Kafka', properties], {
    stdio: ['ignore', out, out],
    detached: true, // its own process group: a Ctrl-C reaches this process, which stops it
  });
  closeSync(out);
  const pid = child.pid!;
  live.set(pid, dir);
  const watchdog = startWatchdog(pid, dir);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.on('exit', () => {
      exited = true;
      live.delete(pid);
      watchdog.kill('SIGKILL');
      resolve();
    }),
  );
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!exited) {
        process.kill(pid, 'SIGTERM');
        const killer = setTimeout(() => !exited && process.kill(pid, 'SIGKILL'), STOP_GRACE_MS);
        await exit;
        clearTimeout(killer);
      }
    })());
  const kill = async (): Promise<void> => {
    if (!exited) process.kill(pid, 'SIGKILL');
    await exit;
  };
  return { pid, exited: exit, hasExited: () => exited, stop, kill };
}

/** Formats and starts one broker+controller; resolves once it serves. */
export async function startBroker(options: BrokerOptions): Promise<Broker> {
  const version = checkVersion(options.version);
  if (options.tv !== undefined && ![0, 1, 2].includes(options.tv))
    throw new BrokerSetupError(`transaction.version must be 0, 1 or 2, not ${options.tv}`);
  const classpath = cachedClasspath(version);
  if (classpath === undefined)
    throw new BrokerSetupError(`Kafka ${version} is not fetched: run \`npm run kafka -- fetch ${version}\``);
  const dir = mkdtempSync(join(tmpdir(), 'txcheck-broker-'));
  const logFile = join(dir, 'broker.log');
  try {
    const [port, controllerPort] = (await freePorts(2)) as [number, number];
    const properties = join(dir, 'server.properties');
    writeFileSync(
      properties,
      kraftProperties({
        dir,
        id: 1,
        voters: `1@127.0.0.1:${controllerPort}`,
        port,
        controllerPort,
        advertised: options.advertise ?? `127.0.0.1:${port}`,
        replicas: 1,
        extra: { ...options.config },
      }),
    );
    const java = ['-cp', classpath, ...jvmOptions(512)];
    await formatStorage(version, java, properties, clusterId(), options.tv);
    const jvm = spawnKafka(java, properties, logFile, dir);
    const { pid } = jvm;
    const stop = async (): Promise<void> => {
      await jvm.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const address = `127.0.0.1:${port}`;
      const connection = await waitUntilServing(
        address,
        () => jvm.hasExited(),
        Date.now() + (options.startTimeoutMs ?? 60_000),
      );
      connection.close();
      const transactionVersion =
        connection.apiVersions!.finalizedFeatures.find((f) => f.name === 'transaction.version')
          ?.maxVersionLevel ?? 0;
      if (options.tv !== undefined && transactionVersion !== options.tv)
        throw new Error(
          `asked for transaction.version=${options.tv}, the broker finalized ${transactionVersion}`,
        );
      return { address, version, transactionVersion, pid, logFile, exited: jvm.exited, stop };
    } catch (e) {
      const log = tail(logFile);
      await stop();
      throw new Error(`Kafka ${version} did not start: ${(e as Error).message}${log ? `\n${log}` : ''}`, {
        cause: e,
      });
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
