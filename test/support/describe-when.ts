/**
 * Suites that need a service the machine may lack (a database, Redis, Chromium): run when it is
 * there; otherwise skipped with a notice, or, under STOREBRIDGE_REQUIRE_DB=1 (set by .ci/run), a
 * failing test that says what is missing. The skip is deliberate: a developer without PostgreSQL
 * can still run the rest, while CI can never pass by skipping. The notice goes to the run's last
 * lines (test/support/skip-reporter.js), or to the console when that reporter is not running.
 */
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

export const REQUIRE_DB = process.env.STOREBRIDGE_REQUIRE_DB === '1';

export interface Requirement {
  /** Why the service cannot be used, as a predicate (`is unreachable (ECONNREFUSED)`), or undefined when it can. */
  readonly unavailable: string | undefined;
  /** The service, as messages name it: `PostgreSQL at postgres://127.0.0.1:5432/test`. */
  readonly what: string;
  /** The failing test's name under STOREBRIDGE_REQUIRE_DB=1: `PostgreSQL is reachable`. */
  readonly check: string;
  /** The kind of suite, for the failure's message: `database`, `Redis`, `browser`. */
  readonly suite: string;
}

export function describeWhen(requirement: Requirement, name: string, body: () => void): void {
  const { unavailable, what, check, suite } = requirement;
  if (unavailable === undefined) {
    describe(name, body);
    return;
  }
  if (REQUIRE_DB) {
    describe(name, () => {
      test(`${check} (STOREBRIDGE_REQUIRE_DB=1)`, () => {
        throw new Error(`${what} ${unavailable}; STOREBRIDGE_REQUIRE_DB=1 turns a skipped ${suite} suite into a failure`);
      });
    });
    return;
  }
  notice(name, `${what} ${unavailable}`);
  describe.skip(name, body);
}

/** A URL for messages, without its credentials. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

/** Records why a suite is skipped, for the skip reporter's summary (or prints it without one). */
function notice(name: string, reason: string): void {
  const dir = process.env.STOREBRIDGE_SKIP_NOTES;
  if (!dir) {
    console.warn(`NOTICE: skipping "${name}": ${reason}. Set STOREBRIDGE_REQUIRE_DB=1 to fail instead.`);
    return;
  }
  const file = expect.getState().testPath;
  writeFileSync(path.join(dir, `${randomBytes(8).toString('hex')}.json`), JSON.stringify({ file, name, reason }));
}
