// What a test does when a client or tool it runs is not installed: it is SKIPPED with the reason
// (which says how to install it), except under QUARTET_REQUIRE_CLIENTS=1 (`.ci/run`), where it
// FAILS, so that CI never passes by skipping. Every such check goes through here.

/** The skip reason for an absent client, or throws when QUARTET_REQUIRE_CLIENTS=1. */
export function missingClient(reason: string): string {
  if (process.env['QUARTET_REQUIRE_CLIENTS'] === '1') throw new Error(`${reason}; QUARTET_REQUIRE_CLIENTS=1 requires it`);
  return reason;
}
