/**
 * Migration 18: expired ceremonies are found by an index. Anyone may start a
 * passkey sign-in, so its challenges come as fast as the address rate limit
 * lets them; each new one deletes the expired ones of its kind, and without
 * an index each of those deletes would read the whole table.
 */
export function authChallengeExpirySchema(): string {
  return `
CREATE INDEX auth_challenges_expiry ON auth_challenges(kind, time_expires);
`;
}
