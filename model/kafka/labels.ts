// The action kinds and the one grammar of their labels. Each kind is listed once, with who acts,
// which Action fields it uses and how its label writes them; from that table come the kind
// numbers, an action's label, and the structured step a label reads back as, which the renderer
// works from. Labels are the replay key of saved traces and of the explorer's paths: their text
// must never change.
import type { KafkaConfig } from './config.ts';
import { isIdempotentNode, isProducerNode } from './network.ts';
import { VERIFICATION_CONN } from './partition.ts';
import { Api, IDEMPOTENT_BASE, LEADER_BASE, TC_NODE, apiName } from './state.ts';
import { bit, bits } from './util.ts';

// ---- Nodes --------------------------------------------------------------------------------------

/** A node of the network, or a consumer, as labels and views name it. */
export type Node =
  /** P<t>.<i>: instance i of transactional.id t. */
  | { readonly role: 'producer'; readonly transactionalId: number; readonly instance: number }
  /** I<j>: an idempotent producer (no transactional.id). */
  | { readonly role: 'idempotentProducer'; readonly index: number }
  /** TC: the transaction coordinator. */
  | { readonly role: 'coordinator' }
  /** L<p>: the leader of data partition p. */
  | { readonly role: 'leader'; readonly partition: number }
  /** GC: the group coordinator, leader of the group's __consumer_offsets partition. */
  | { readonly role: 'groupCoordinator' }
  /** C<c>: a consumer. */
  | { readonly role: 'consumer'; readonly index: number };
export type Role = Node['role'];

const COORDINATOR: Node = { role: 'coordinator' };
const GROUP_COORDINATOR: Node = { role: 'groupCoordinator' };

export function nameOf(node: Node): string {
  switch (node.role) {
    case 'producer':
      return `P${node.transactionalId}.${node.instance}`;
    case 'idempotentProducer':
      return idempotentName(node.index);
    case 'coordinator':
      return 'TC';
    case 'leader':
      return `L${node.partition}`;
    case 'groupCoordinator':
      return 'GC';
    case 'consumer':
      return consumerName(node.index);
  }
}

/** A number as labels write it: no leading zero, no plus sign, no "-0"; an index is never negative. */
const INTEGER = /^(?:0|-?[1-9]\d*)$/;
const INDEX = /^(?:0|[1-9]\d*)$/;
const integer = (text: string): number | undefined => (INTEGER.test(text) ? Number(text) : undefined);
const index = (text: string): number | undefined => (INDEX.test(text) ? Number(text) : undefined);

/** The node a name names, or undefined. */
export function readNode(name: string): Node | undefined {
  if (name === 'TC') return COORDINATOR;
  if (name === 'GC') return GROUP_COORDINATOR;
  const producer = /^P([^.]+)\.(.+)$/.exec(name);
  if (producer !== null) {
    const [transactionalId, instance] = [index(producer[1]!), index(producer[2]!)];
    return transactionalId === undefined || instance === undefined
      ? undefined
      : { role: 'producer', transactionalId, instance };
  }
  const n = index(name.slice(1));
  if (n === undefined) return undefined;
  if (name.startsWith('I')) return { role: 'idempotentProducer', index: n };
  if (name.startsWith('L')) return { role: 'leader', partition: n };
  if (name.startsWith('C')) return { role: 'consumer', index: n };
  return undefined;
}

const NODE_NAMES = 'TC, GC, P<t>.<i>, I<j>, L<p> or C<c>';

/** Producer instance i: instance i % instancesPerId of transactional.id i / instancesPerId. */
function producerNode(cfg: KafkaConfig, i: number): Node {
  return {
    role: 'producer',
    transactionalId: Math.floor(i / cfg.instancesPerId),
    instance: i % cfg.instancesPerId,
  };
}

/** The leader of partition p; the partition after the data partitions is the group's __consumer_offsets. */
function leaderNode(cfg: KafkaConfig, p: number): Node {
  return p === cfg.partitions ? GROUP_COORDINATOR : { role: 'leader', partition: p };
}

/** The node numbered `node` (state.ts numbers them). */
function nodeOf(cfg: KafkaConfig, node: number): Node {
  if (node === TC_NODE) return COORDINATOR;
  if (isProducerNode(node)) return producerNode(cfg, node);
  if (isIdempotentNode(node)) return { role: 'idempotentProducer', index: node - IDEMPOTENT_BASE };
  return leaderNode(cfg, node - LEADER_BASE);
}

export const nodeName = (cfg: KafkaConfig, node: number): string => nameOf(nodeOf(cfg, node));
export const producerName = (cfg: KafkaConfig, i: number): string => nameOf(producerNode(cfg, i));
export const idempotentName = (j: number): string => `I${j}`;
export const consumerName = (c: number): string => `C${c}`;
export const transactionalIdName = (t: number): string => `t${t}`;
export const dataPartitionName = (p: number): string => `p${p}`;

/** Leaders answer the coordinator's markers and ask it to verify, on a connection of their own. */
function carriesResponses(from: Node, to: Node, connection: number): boolean {
  if (to.role === 'producer' || to.role === 'idempotentProducer') return true;
  const fromLeader = from.role === 'leader' || from.role === 'groupCoordinator';
  return connection === VERIFICATION_CONN
    ? from.role === 'coordinator'
    : to.role === 'coordinator' && fromLeader;
}

// ---- The grammar --------------------------------------------------------------------------------

/**
 * One step as the model takes it. What `actor`, `target`, `conn` and `api` hold depends on the
 * kind: `actionForms` below says it for each.
 */
export interface Action {
  readonly kind: ActionKind;
  readonly actor: number;
  readonly target: number;
  readonly conn: number;
  readonly api: number;
}
type ActionField = 'actor' | 'target' | 'conn' | 'api';

/** What an argument's value is: tells the messages and the generated tests what to expect. */
export type Domain = 'partition' | 'transactionalId' | 'integer' | 'api' | 'leader' | 'appends';

/** One argument of a call: where the action holds it, and how the label writes and reads it. */
interface Argument<V> {
  readonly domain: Domain;
  /** How the label shows it, for error messages. */
  readonly expected: string;
  of(cfg: KafkaConfig, a: Action): V;
  write(value: V): string;
  read(text: string): V | undefined;
}
type Arguments = Readonly<Record<string, Argument<unknown>>>;

/** A number written after a fixed prefix: p0, t1, pid 5, attempt 2. */
function numbered(
  domain: Domain,
  prefix: string,
  field: ActionField,
  expected = `${prefix}<n>`,
): Argument<number> {
  const readNumber = domain === 'integer' ? integer : index;
  return {
    domain,
    expected,
    of: (_, a) => a[field],
    write: (n) => `${prefix}${n}`,
    read: (text) => (text.startsWith(prefix) ? readNumber(text.slice(prefix.length)) : undefined),
  };
}
const partition = (field: ActionField) => numbered('partition', 'p', field, 'p<partition>');
const transactionalId = (field: ActionField) =>
  numbered('transactionalId', 't', field, 't<transactional.id>');

const api: Argument<ApiName> = {
  domain: 'api',
  expected: 'an API name',
  of: (_, a) => apiName[a.api] as ApiName,
  write: (name) => name,
  read: (text) => (Object.hasOwn(Api, text) ? (text as ApiName) : undefined),
};
export type ApiName = keyof typeof Api;

/** A partition's leader, named as a node. */
const leader = (field: ActionField): Argument<Node> => ({
  domain: 'leader',
  expected: 'L<p> or GC',
  of: (cfg, a) => leaderNode(cfg, a[field]),
  write: nameOf,
  read: (text) => {
    const node = readNode(text);
    return node?.role === 'leader' || node?.role === 'groupCoordinator' ? node : undefined;
  },
});

/** A __transaction_state append in flight at a failover, kept in the log or lost with it. */
export interface AppendInFlight {
  readonly transactionalId: number;
  readonly kept: boolean;
}
/** The appends in flight: `target` has a bit for each kept one, `conn` for each lost one. */
const appendsInFlight: Argument<readonly AppendInFlight[]> = {
  domain: 'appends',
  expected: 't<transactional.id> kept|lost, ...',
  of: (_, a) => bits(a.target | a.conn).map((t) => ({ transactionalId: t, kept: (a.target & bit(t)) !== 0 })),
  write: (appends) => appends.map((x) => `t${x.transactionalId} ${x.kept ? 'kept' : 'lost'}`).join(', '),
  read: (text) => {
    if (text === '') return [];
    const appends = text.split(', ').map((item) => {
      const m = /^t(\S+) (kept|lost)$/.exec(item);
      const t = m === null ? undefined : index(m[1]!);
      return t === undefined ? undefined : { transactionalId: t, kept: m![2] === 'kept' };
    });
    return appends.every((x) => x !== undefined) ? appends : undefined;
  },
};

/** Who takes a call step, and how the action names it. */
interface Actor {
  readonly roles: readonly Role[];
  of(cfg: KafkaConfig, a: Action): Node;
}
/** A transactional producer instance: `actor` is its index. */
const producer: Actor = { roles: ['producer'], of: (cfg, a) => producerNode(cfg, a.actor) };
/** An idempotent producer: `actor` is its index. */
const idempotentProducer: Actor = {
  roles: ['idempotentProducer'],
  of: (_, a) => ({ role: 'idempotentProducer', index: a.actor }),
};
const coordinator: Actor = { roles: ['coordinator'], of: () => COORDINATOR };
/** A partition's leader: `actor` is the partition. */
const partitionLeader: Actor = {
  roles: ['leader', 'groupCoordinator'],
  of: (cfg, a) => leaderNode(cfg, a.actor),
};
/** A consumer: `actor` is its index. */
const consumer: Actor = { roles: ['consumer'], of: (_, a) => ({ role: 'consumer', index: a.actor }) };

/** `<actor>: <word>(<arguments>)`; without arguments (or with none written), no parentheses. */
interface CallForm<A extends Arguments> {
  readonly shape: 'call';
  readonly actor: Actor;
  readonly args: A;
  /** The action's name in the label, when it is not the kind's. */
  readonly word: string | undefined;
}
/**
 * `deliver|lose <from>→<to><connection>: <api>[ response]`: the channel from node `actor` to node
 * `target` on connection `conn`, whose head is a message of `api`.
 */
interface ChannelForm {
  readonly shape: 'channel';
}

function call<A extends Arguments = Record<never, never>>(
  actor: Actor,
  args?: A,
  word?: string,
): CallForm<A> {
  return { shape: 'call', actor, args: args ?? ({} as A), word };
}
const channel: ChannelForm = { shape: 'channel' };

/** Every action kind, numbered in this order, with the form of its label. */
export const actionForms = [
  ['initTransactions', call(producer)],
  ['fetchOffsets', call(producer)],
  ['beginTransaction', call(producer)],
  ['send', call(producer, { partition: partition('target') })],
  ['sendOffsetsToTransaction', call(producer)],
  ['commitTransaction', call(producer)],
  ['abortTransaction', call(producer)],
  ['sendTxnRequest', call(producer)],
  ['sendProduce', call(producer, { partition: partition('target') })],
  ['deliver', channel],
  ['lose', channel],
  ['requestTimeout', call(producer, { api })],
  ['produceTimeout', call(producer, { partition: partition('target') })],
  ['batchExpired', call(producer, { partition: partition('target') })],
  ['crash', call(producer)],
  ['transactionTimeout', call(coordinator, { transactionalId: transactionalId('actor') })],
  ['coordinatorFailover', call(coordinator, { appends: appendsInFlight })],
  [
    'resendTxnMarker',
    call(coordinator, { transactionalId: transactionalId('actor'), partition: partition('target') }),
  ],
  ['completeTransaction', call(coordinator, { transactionalId: transactionalId('actor') })],
  ['fetch', call(consumer, { partition: partition('target') })],
  [
    'verificationTimeout',
    call(partitionLeader, {
      attempt: numbered('integer', 'attempt ', 'target'),
      sequence: numbered('integer', 'seq ', 'conn'),
    }),
  ],
  ['completeAppend', call(coordinator, { transactionalId: transactionalId('actor') })],
  ['failAppend', call(coordinator, { transactionalId: transactionalId('actor') })],
  ['markerTimeout', call(coordinator, { leader: leader('target') })],
  ['transactionalIdExpiry', call(coordinator, { transactionalId: transactionalId('actor') })],
  ['producerStateExpiry', call(partitionLeader, { producerId: numbered('integer', 'pid ', 'target') })],
  ['loadTransactions', call(coordinator)],
  [
    'finalizeTransactionVersion',
    call(coordinator, { version: numbered('integer', '', 'target', '<version>') }),
  ],
  ['idempotentInitProducerId', call(idempotentProducer, {}, 'initProducerId')],
  ['idempotentSend', call(idempotentProducer, { partition: partition('target') }, 'send')],
  ['idempotentSendProduce', call(idempotentProducer, { partition: partition('target') }, 'sendProduce')],
  [
    'idempotentProduceTimeout',
    call(idempotentProducer, { partition: partition('target') }, 'produceTimeout'),
  ],
  ['idempotentBatchExpired', call(idempotentProducer, { partition: partition('target') }, 'batchExpired')],
] as const;

// The kind numbers as literal types, so that a switch over an action's kind covers every kind.
type Forms = typeof actionForms;
type Position = keyof Forms & `${number}`;
type Numbered = {
  readonly [P in Position as Forms[P][0]]: P extends `${infer N extends number}` ? N : never;
};
/** Each action kind's number: its position in `actionForms`. */
export const ActionKind = Object.fromEntries(actionForms.map(([name], i) => [name, i])) as Numbered;
export type ActionKind = Numbered[keyof Numbered];
export const actionKindNames: readonly string[] = actionForms.map(([name]) => name);

// ---- Structured steps ---------------------------------------------------------------------------

type Values<A> = { readonly [N in keyof A]: A[N] extends Argument<infer V> ? V : never };
/** A message delivered or lost: the head of the channel `from → to` on `connection`. */
export interface ChannelStep {
  readonly from: Node;
  readonly to: Node;
  /** 0 for a node's first connection, n for a later one, VERIFICATION_CONN for a leader's verification. */
  readonly connection: number;
  readonly api: ApiName;
}
type StepOf<K, F> =
  F extends CallForm<infer A>
    ? { readonly kind: K; readonly actor: Node } & Values<A>
    : { readonly kind: K } & ChannelStep;
/** An action as its label says it: the kind's name, who acts and the arguments, by name. */
export type Step = { [P in Position]: StepOf<Forms[P][0], Forms[P][1]> }[Position];
export type StepOfKind<K extends Step['kind']> = Extract<Step, { readonly kind: K }>;
export type CallStep = Exclude<Step, ChannelStep>;

/** A kind's form, ready for use: its arguments in label order and the word of its call. */
interface Syntax {
  readonly kind: string;
  readonly form: CallForm<Arguments> | ChannelForm;
  readonly args: readonly (readonly [string, Argument<unknown>])[];
  readonly word: string;
}
const syntaxes: readonly Syntax[] = actionForms.map(([kind, form]) => ({
  kind,
  form,
  args: form.shape === 'call' ? Object.entries(form.args as Arguments) : [],
  word: form.shape === 'call' ? (form.word ?? kind) : kind,
}));
const syntaxOf = new Map(syntaxes.map((x) => [x.kind, x]));
/** The call kinds each role can take, by the word of their labels. */
const callsOf = new Map<Role, Map<string, Syntax>>();
for (const syntax of syntaxes) {
  if (syntax.form.shape !== 'call') continue;
  for (const role of syntax.form.actor.roles) {
    const words = callsOf.get(role) ?? new Map<string, Syntax>();
    words.set(syntax.word, syntax);
    callsOf.set(role, words);
  }
}

/** The step an action of the model takes, in its label's terms. */
export function stepOf(cfg: KafkaConfig, a: Action): Step {
  const { kind, form, args } = syntaxes[a.kind]!;
  if (form.shape === 'channel') {
    const channelStep: ChannelStep = {
      from: nodeOf(cfg, a.actor),
      to: nodeOf(cfg, a.target),
      connection: a.conn,
      api: apiName[a.api] as ApiName,
    };
    return { kind, ...channelStep } as Step;
  }
  const step: Record<string, unknown> = { kind, actor: form.actor.of(cfg, a) };
  for (const [name, arg] of args) step[name] = arg.of(cfg, a);
  return step as Step;
}

export function labelOf(step: Step): string {
  const { form, args, word } = syntaxOf.get(step.kind)!;
  if (form.shape === 'channel') {
    const { from, to, connection, api } = step as ChannelStep;
    const on =
      connection === 0 ? '' : connection === VERIFICATION_CONN ? ' (verification)' : `#${connection}`;
    const response = carriesResponses(from, to, connection) ? ' response' : '';
    return `${step.kind} ${nameOf(from)}→${nameOf(to)}${on}: ${api}${response}`;
  }
  const values = step as unknown as Readonly<Record<string, unknown>>;
  const written = args.map(([name, arg]) => arg.write(values[name])).join(', ');
  const head = `${nameOf((step as CallStep).actor)}: ${word}`;
  return written === '' ? head : `${head}(${written})`;
}

/** The label of an action. */
export function actionLabel(cfg: KafkaConfig, a: Action): string {
  return labelOf(stepOf(cfg, a));
}

/** Why a text is not a label: what was expected where it went wrong. */
export interface LabelError {
  readonly error: string;
}

// A connection after the first is #n, the verification connection ` (verification)`.
const CHANNEL = /^(deliver|lose) ([^→]+)→([^#: ]+)(?:#([1-9]\d*)| (\(verification\)))?: (\w+)( response)?$/;
const CALL = /^(\S+): (\w+)(?:\((.+)\))?$/;

/** The step a label says, or what was expected where the text went wrong. */
export function parseLabel(label: string): Step | LabelError {
  const fail = (expected: string): LabelError => ({
    error: `label ${JSON.stringify(label)}: expected ${expected}`,
  });
  const channelLabel = CHANNEL.exec(label);
  if (channelLabel !== null) {
    const [, kind, fromName, toName, conn, verification, apiText, response] = channelLabel;
    const [from, to] = [readNode(fromName!), readNode(toName!)];
    if (from === undefined || to === undefined) return fail(`a node (${NODE_NAMES}) on each side of →`);
    const connection = verification === undefined ? Number(conn ?? 0) : VERIFICATION_CONN;
    const head = api.read(apiText!);
    if (head === undefined) return fail(`an API name after ": " (${Object.keys(Api).join(', ')})`);
    const responds = carriesResponses(from, to, connection);
    if (responds !== (response !== undefined))
      return fail(`"${head}${responds ? ' response' : ''}" on ${nameOf(from)}→${nameOf(to)}`);
    return { kind, from, to, connection, api: head } as Step;
  }
  const callLabel = CALL.exec(label);
  if (callLabel === null)
    return fail('"<actor>: <action>(<arguments>)" or "deliver|lose <from>→<to>: <API>"');
  const [, actorName, word, argText = ''] = callLabel;
  const actor = readNode(actorName!);
  if (actor === undefined) return fail(`an actor (${NODE_NAMES}) before ": "`);
  const calls = callsOf.get(actor.role) ?? new Map<string, Syntax>();
  const syntax = calls.get(word!);
  if (syntax === undefined) return fail(`an action of ${actorName} (${[...calls.keys()].join(', ')})`);
  const { kind, args } = syntax;
  const texts = args.length <= 1 ? [argText] : argText.split(', ');
  const values = args.map(([, arg], i) => (texts.length === args.length ? arg.read(texts[i]!) : undefined));
  if ((args.length === 0 && argText !== '') || values.some((v) => v === undefined)) {
    const expected = args.map(([, arg]) => arg.expected).join(', ');
    return fail(expected === '' ? `${word} without arguments` : `${word}(${expected})`);
  }
  const step: Record<string, unknown> = { kind, actor };
  args.forEach(([name], i) => (step[name] = values[i]));
  return step as Step;
}

/** Whether parseLabel failed. */
export const isLabelError = (parsed: Step | LabelError): parsed is LabelError => 'error' in parsed;
