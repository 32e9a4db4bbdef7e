// Property-based tests run from a fixed seed, so a run is the same on every machine; set
// FAST_CHECK_SEED to explore other seeds (a failure prints the seed and path to replay it).
import fc from 'fast-check';

fc.configureGlobal({ seed: Number(process.env.FAST_CHECK_SEED ?? 20261201) });
