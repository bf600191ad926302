/**
 * Migration 4: upload claims with a deadline, so that a PUT cut off by a
 * crash does not hold its upload forever. A PUT claims its upload with a
 * random token and a deadline (claim_expires), renewed while its bytes flow;
 * once the deadline has passed, the claim is stale: a new PUT takes it over
 * and the sweep frees it. Completing and releasing name the token, so only
 * the holder can do either (upload-repository.ts).
 *
 * Claims taken before this migration have no token and no deadline; they
 * were made by a server that has stopped (this runs at start), so they are
 * freed here.
 */
export function uploadClaimsSchema(bigint: string): string {
  return `
ALTER TABLE uploads ADD COLUMN claim_token TEXT;
ALTER TABLE uploads ADD COLUMN claim_expires ${bigint};
UPDATE uploads SET time_started = NULL WHERE time_completed IS NULL;
CREATE INDEX uploads_object ON uploads(object_id);
CREATE INDEX uploads_open ON uploads(expires) WHERE time_completed IS NULL;
`;
}
