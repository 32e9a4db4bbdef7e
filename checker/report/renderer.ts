// What a model may say about its traces in its own terms: the contract between a model's
// renderer and the reports (text, mermaid, html). Types only, so a model can implement it
// without depending on how reports are built.

/** A state as a trace records it: the model's view, in ITF form. */
export type View = Readonly<Record<string, unknown>>;

/** One entry of a sequence diagram. */
export type DiagramEvent =
  /** A message that arrived; `sentAt` is the step that sent it, when known; `effect` what it did. */
  | {
      readonly kind: 'message';
      readonly from: string;
      readonly to: string;
      readonly text: string;
      readonly response: boolean;
      readonly sentAt?: number;
      readonly effect?: string;
    }
  /** A message the network lost on its way. */
  | { readonly kind: 'lost'; readonly from: string; readonly to: string; readonly text: string }
  /** Something one participant did or suffered; `fault` marks timeouts, crashes, loss, fencing. */
  | { readonly kind: 'note'; readonly over: string; readonly text: string; readonly fault: boolean };

export interface TableRow {
  readonly cells: readonly string[];
  /** Markers shown beside the row, such as "LSO" or "HW". */
  readonly marks: readonly string[];
}

export interface Table {
  /** The same across steps for the same thing (a partition's log, say). */
  readonly id: string;
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly TableRow[];
  /** Shown by compact renderings (text) at the steps where it changed. */
  readonly focus: boolean;
}

/** What a model says about one step. */
export interface StepMeaning {
  /** Who acts: the participant that sends, receives or decides. */
  readonly actor: string;
  /** The step in the protocol's terms, on one line. */
  readonly action: string;
  /** What changed, in the model's terms, one line each. */
  readonly changes: readonly string[];
  readonly events: readonly DiagramEvent[];
}

export interface Explanation {
  /** One sentence naming the records, offsets or fields involved. */
  readonly text: string;
  /** The participants the violation concerns (the diagram notes it over them). */
  readonly over: readonly string[];
}

/** Model-specific rendering of traces; every part has a generic fallback. */
export interface TraceRenderer {
  /** The meaning of every step, in order: `meanings[i]` explains `labels[i]` (states[i] → states[i + 1]). */
  steps(states: readonly View[], labels: readonly string[]): readonly StepMeaning[];
  /** Lifelines of the sequence diagram, in their order (participants no event names are dropped). */
  participants(states: readonly View[]): readonly string[];
  /** Tables (such as logs) describing one state. */
  tables(state: View): readonly Table[];
  /** Why `property` is violated in the last state; undefined when the renderer cannot tell. */
  explain(property: string, states: readonly View[], labels: readonly string[]): Explanation | undefined;
}
