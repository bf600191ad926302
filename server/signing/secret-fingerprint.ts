/**
 * One signing secret across processes. Every API process and worker on one
 * database must sign with the same SIGNING_SECRET: a URL, a player session
 * or an invite link signed by one is checked by whichever process the load
 * balancer picks next. A process with another secret would refuse what the
 * others signed (and they what it signs), intermittently, by the luck of
 * the balancer. So it refuses to start instead, and says why.
 *
 * The database keeps only a fingerprint: an HMAC-SHA256, under the secret,
 * of a fixed label that nothing else signs (URL signatures cover a method
 * and a path; derived keys use labels of their own), so the fingerprint is
 * neither the secret nor a key, and a copy of the database signs nothing.
 * The first process to start on a database records it; the row is written
 * with INSERT … ON CONFLICT DO NOTHING, so of two processes starting at once
 * on a fresh database, one records and the other is checked against it.
 */
import { createHmac } from 'node:crypto';
import type { Db } from '../store/db.ts';

const FINGERPRINT_LABEL = 'audio-share signing secret fingerprint v1';
const SETTING = 'signing_secret_fingerprint';

/** The fingerprint of a signing secret, as stored: 64 hex digits. */
export function signingSecretFingerprint(secret: Buffer): string {
  return createHmac('sha256', secret).update(FINGERPRINT_LABEL).digest('hex');
}

/** This process's SIGNING_SECRET is not the one the database's other processes use. */
export class SigningSecretMismatchError extends Error {
  constructor(recordedAt: number) {
    super(
      [
        'SIGNING_SECRET does not match the one the servers and workers on this database use',
        `(its fingerprint was recorded by the first of them to start, at ${new Date(recordedAt).toISOString()}).`,
        'Every API process and worker sharing a database must have the same SIGNING_SECRET, or the URLs, sessions and invite links one signs are refused by the others.',
        'Give this one the same SIGNING_SECRET as the rest (without it, each server generates its own in DATA_DIR/secrets.json).',
        'To change the secret on purpose, see "One signing secret" in deploy/README.md.',
      ].join(' '),
    );
    this.name = 'SigningSecretMismatchError';
  }
}

/**
 * Records the secret's fingerprint if the database has none yet, and
 * otherwise checks that it is the one recorded; throws a
 * SigningSecretMismatchError when it is not.
 */
export async function checkSigningSecret(db: Db, secret: Buffer, now: number): Promise<void> {
  const fingerprint = signingSecretFingerprint(secret);
  await db.execute('INSERT INTO deployment_settings (name, value, time_set) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [SETTING, fingerprint, now]);
  const [recorded] = await db.query<{ value: string; time_set: number }>('SELECT value, time_set FROM deployment_settings WHERE name = $1', [SETTING]);
  // A plain comparison: only the operator chooses the secret here, so timing tells no one anything.
  if (recorded.value !== fingerprint) throw new SigningSecretMismatchError(recorded.time_set);
}
