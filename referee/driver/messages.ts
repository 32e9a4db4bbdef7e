// The requests and responses the driver sends and reads, written from Kafka's message schemas
// (clients/src/main/resources/common/message/*.json, the same in every 4.x release for the
// versions here). Field names are the schemas' in camelCase; error codes become Kafka's names.
import type { Api } from './api.ts';
import { errorName } from './errors.ts';

// ---- ApiVersions (key 18) -----------------------------------------------------------------

export interface ApiVersionsRequest {
  readonly clientSoftwareName: string;
  readonly clientSoftwareVersion: string;
}
export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}
export interface FinalizedFeature {
  readonly name: string;
  readonly maxVersionLevel: number;
  readonly minVersionLevel: number;
}
export interface ApiVersionsResponse {
  error: string;
  apiKeys: ApiVersionRange[];
  throttleTimeMs: number;
  supportedFeatures: { name: string; minVersion: number; maxVersion: number }[];
  /** -1 until the broker knows the cluster's finalized features. */
  finalizedFeaturesEpoch: number;
  finalizedFeatures: FinalizedFeature[];
}

export const ApiVersions: Api<ApiVersionsRequest, ApiVersionsResponse> = {
  key: 18,
  name: 'ApiVersions',
  versions: [3, 4],
  flexibleFrom: 3,
  encode(w, req) {
    w.struct((w) => w.string(req.clientSoftwareName).string(req.clientSoftwareVersion));
  },
  decode(r) {
    return r.struct<ApiVersionsResponse>(
      (r) => ({
        error: errorName(r.int16()),
        apiKeys: r.array((r) =>
          r.struct((r) => ({ apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() })),
        ),
        throttleTimeMs: r.int32(),
        supportedFeatures: [],
        finalizedFeaturesEpoch: -1,
        finalizedFeatures: [],
      }),
      {
        0: (r, into) => {
          into.supportedFeatures = r.array((r) =>
            r.struct((r) => ({ name: r.string(), minVersion: r.int16(), maxVersion: r.int16() })),
          );
        },
        1: (r, into) => {
          into.finalizedFeaturesEpoch = r.int64();
        },
        2: (r, into) => {
          into.finalizedFeatures = r.array((r) =>
            r.struct((r) => ({ name: r.string(), maxVersionLevel: r.int16(), minVersionLevel: r.int16() })),
          );
        },
      },
    );
  },
};
