// Kafka traces in Kafka's terms: each step as the RPC or call it is, what it changed in logs,
// coordinator and clients, the partition logs with HW and LSO, and why a property broke. Reads
// only the trace's states (the model's view) and the steps their labels say, never the model's
// internals.
import type { TraceRenderer } from '../../../checker/report/renderer.ts';
import { explain } from './explanations.ts';
import { participants, steps } from './steps.ts';
import { tables } from './tables.ts';

export const kafkaRenderer: TraceRenderer = { steps, participants, tables, explain };
