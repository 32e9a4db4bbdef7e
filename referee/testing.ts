// The release the broker tests run against, and whether they may skip here: they run wherever
// java, mvn and that release's jars are, and must run in CI (CI=true or TXCHECK_REQUIRE_KAFKA=1).
import { cachedClasspath, haveJavaAndMaven } from './broker.ts';

export const TEST_RELEASE = '4.1.1';

const required = process.env.CI === 'true' || process.env.TXCHECK_REQUIRE_KAFKA === '1';

function missing(): string | undefined {
  if (!haveJavaAndMaven()) return 'java or mvn is not on PATH';
  if (cachedClasspath(TEST_RELEASE) === undefined)
    return `Kafka ${TEST_RELEASE} is not fetched (npm run kafka -- fetch ${TEST_RELEASE})`;
  return undefined;
}

/** Whether a test file's broker tests skip, saying why once when they do. */
export function skipWithoutKafka(file: string): boolean {
  if (required) return false;
  const why = missing();
  if (why !== undefined)
    console.warn(
      `The real-broker tests of ${file} are skipped: ${why} (TXCHECK_REQUIRE_KAFKA=1 makes that a failure).`,
    );
  return why !== undefined;
}
