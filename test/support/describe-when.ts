/**
 * Suites that need a service the machine may lack (a database, Redis, Chromium): run when it is
 * there; otherwise skipped with a notice, or, under STOREBRIDGE_REQUIRE_DB=1 (set by .ci/run), a
 * failing test that says what is missing. The skip is deliberate: a developer without PostgreSQL
 * can still run the rest, while CI can never pass by skipping.
 */
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
  console.warn(`NOTICE: skipping "${name}": ${what} ${unavailable}. Set STOREBRIDGE_REQUIRE_DB=1 to fail instead.`);
  describe.skip(name, body);
}

/** A URL for messages, without its credentials. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}
