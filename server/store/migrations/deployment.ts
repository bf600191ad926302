/**
 * Migration 7: facts every process on one database must agree on, one row
 * each. The first is the fingerprint of the signing secret (an HMAC of a
 * fixed label under SIGNING_SECRET, never the secret itself): the first
 * server or worker to start records it, and one whose secret gives another
 * fingerprint refuses to start (server/signing/secret-fingerprint.ts).
 * Nothing is recorded here: a migration does not know the secret.
 */
export function deploymentSchema(bigint: string): string {
  return `
CREATE TABLE deployment_settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  time_set ${bigint} NOT NULL
);
`;
}
