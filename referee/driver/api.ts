// One Kafka API as this driver speaks it: its key, the versions it can write, and how a request
// body is encoded and a response body decoded in one version. Headers are the connection's.
import type { Reader, Writer } from './codec.ts';

export interface Api<Request, Response> {
  readonly key: number;
  /** Kafka's name of the API (ApiKeys). */
  readonly name: string;
  /** The lowest and highest version this driver writes. */
  readonly versions: readonly [number, number];
  /** The first flexible version (the schema's "flexibleVersions"). */
  readonly flexibleFrom: number;
  encode(w: Writer, request: Request, version: number): void;
  decode(r: Reader, version: number): Response;
}

export const API_VERSIONS_KEY = 18;

/** Request header v2 for flexible request versions, v1 otherwise (RequestHeader.json). */
export function requestHeaderVersion(api: Api<unknown, unknown>, version: number): number {
  return version >= api.flexibleFrom ? 2 : 1;
}

/**
 * Response header v1 for flexible versions, v0 otherwise; ApiVersions answers with v0 always, so
 * that a client can read it before it knows which versions the broker speaks.
 */
export function responseHeaderVersion(api: Api<unknown, unknown>, version: number): number {
  return version >= api.flexibleFrom && api.key !== API_VERSIONS_KEY ? 1 : 0;
}
