/**
 * Passkeys (WebAuthn credentials) and the challenges of their ceremonies,
 * over the `passkeys` and `auth_challenges` tables (migration 15). Both live
 * in the database, not in a process's memory: the browser may ask one API
 * process for a challenge and send its answer to another.
 */
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

export interface PasskeyRecord {
  id: string;
  userId: string;
  /** The credential's id, base64url, as the authenticator gave it. */
  credentialId: string;
  /** The credential's public key (COSE), base64url. */
  publicKey: string;
  /** The authenticator's signature counter at its last use (0 for authenticators that keep none). */
  counter: number;
  /** How the browser may reach the authenticator (internal, hybrid, usb…), as it reported them. */
  transports: string[];
  name: string;
  /** Whether the credential is backed up (synced), per the authenticator data's BS flag. */
  backedUp: boolean;
  timeCreated: number;
  timeLastUsed: number | null;
}

type PasskeyRow = {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  name: string;
  backed_up: number;
  time_created: number;
  time_last_used: number | null;
};

const fromRow = (row: PasskeyRow): PasskeyRecord => ({
  id: row.id,
  userId: row.user_id,
  credentialId: row.credential_id,
  publicKey: row.public_key,
  counter: row.counter,
  transports: JSON.parse(row.transports),
  name: row.name,
  backedUp: row.backed_up === 1,
  timeCreated: row.time_created,
  timeLastUsed: row.time_last_used,
});

/** The two WebAuthn ceremonies, each with challenges of its own kind: one is never taken for the other. */
export type ChallengeKind = 'passkey-registration' | 'passkey-authentication';

export interface ChallengeRecord {
  id: string;
  kind: ChallengeKind;
  /** Whose registration it is; null for a sign-in, where nobody is known yet. */
  userId: string | null;
  /** The challenge the authenticator must sign, base64url. */
  challenge: string;
  timeExpires: number;
}

type ChallengeRow = { id: string; kind: ChallengeKind; user_id: string | null; data: string; time_expires: number };

export class PasskeyRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Stores a passkey; false when its credential is stored already (for this account or another), in one statement on either backend. */
  async insert(passkey: PasskeyRecord): Promise<boolean> {
    const inserted = await this.db.execute(
      `INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name, backed_up, time_created, time_last_used)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (credential_id) DO NOTHING`,
      [
        passkey.id,
        passkey.userId,
        passkey.credentialId,
        passkey.publicKey,
        passkey.counter,
        JSON.stringify(passkey.transports),
        passkey.name,
        passkey.backedUp ? 1 : 0,
        passkey.timeCreated,
        passkey.timeLastUsed,
      ],
    );
    return inserted === 1;
  }

  async countOf(userId: string): Promise<number> {
    const [row] = await this.db.query<{ count: number }>('SELECT COUNT(*) AS count FROM passkeys WHERE user_id = $1', [userId]);
    return Number(row.count);
  }

  async get(id: string): Promise<PasskeyRecord | undefined> {
    const [row] = await this.db.query<PasskeyRow>('SELECT * FROM passkeys WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  async findByCredentialId(credentialId: string): Promise<PasskeyRecord | undefined> {
    const [row] = await this.db.query<PasskeyRow>('SELECT * FROM passkeys WHERE credential_id = $1', [credentialId]);
    return row && fromRow(row);
  }

  /** The user's passkeys, oldest first. */
  async listOf(userId: string): Promise<PasskeyRecord[]> {
    const rows = await this.db.query<PasskeyRow>('SELECT * FROM passkeys WHERE user_id = $1 ORDER BY time_created, id', [userId]);
    return rows.map(fromRow);
  }

  /** Renames one of the user's passkeys; false when the user has no passkey with this id. */
  async rename(userId: string, id: string, name: string): Promise<boolean> {
    return (await this.db.execute('UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2', [id, userId, name])) === 1;
  }

  /** Removes one of the user's passkeys; false when the user has no passkey with this id. */
  async remove(userId: string, id: string): Promise<boolean> {
    return (await this.db.execute('DELETE FROM passkeys WHERE id = $1 AND user_id = $2', [id, userId])) === 1;
  }

  /**
   * Removes every passkey of the user, and the registrations it had begun (a new password takes the account back:
   * session-service.ts's endAccessOf); answers how many passkeys there were.
   */
  async removeAllOf(userId: string): Promise<number> {
    await this.db.execute("DELETE FROM auth_challenges WHERE user_id = $1 AND kind = 'passkey-registration'", [userId]);
    return this.db.execute('DELETE FROM passkeys WHERE user_id = $1', [userId]);
  }

  /**
   * Records a sign-in: the counter the authenticator reported, whether it is
   * backed up now, and when. The counter only moves forward: of two sign-ins
   * with the same credential at once, the one whose counter another already
   * passed is refused (false), as a cloned authenticator's would be.
   * WebAuthn Level 3, §7.2 step 22: "If authData.signCount is nonzero or
   * storedSignCount is nonzero … If authData.signCount is greater than
   * storedSignCount: Update storedSignCount to be the value of
   * authData.signCount." A counter of 0 (authenticators that keep none, as
   * synced passkeys) stays 0.
   */
  async recordUse(id: string, counter: number, backedUp: boolean, now: number): Promise<boolean> {
    const changed = await this.db.execute(
      `UPDATE passkeys SET counter = $2, backed_up = $3, time_last_used = $4
       WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))`,
      [id, counter, backedUp ? 1 : 0, now],
    );
    return changed === 1;
  }

  /** Stores a challenge for `ttlMs`, and forgets the expired ones of its kind (nobody can answer them any more). */
  async createChallenge(kind: ChallengeKind, userId: string | null, challenge: string, now: number, ttlMs: number): Promise<ChallengeRecord> {
    const record: ChallengeRecord = { id: newId('chl'), kind, userId, challenge, timeExpires: now + ttlMs };
    await this.db.execute('DELETE FROM auth_challenges WHERE kind = $1 AND time_expires <= $2', [kind, now]);
    await this.db.execute('INSERT INTO auth_challenges (id, kind, user_id, data, time_expires) VALUES ($1, $2, $3, $4, $5)', [
      record.id,
      kind,
      userId,
      JSON.stringify({ challenge }),
      record.timeExpires,
    ]);
    return record;
  }

  /**
   * Takes a challenge of this kind, once: it is deleted in the same
   * statement that reads it, so of two answers to one challenge (a replay,
   * or two processes at once) only one finds it. An expired challenge is
   * deleted and not answered.
   */
  async takeChallenge(kind: ChallengeKind, id: string, now: number): Promise<ChallengeRecord | undefined> {
    const [row] = await this.db.query<ChallengeRow>('DELETE FROM auth_challenges WHERE id = $1 AND kind = $2 RETURNING id, kind, user_id, data, time_expires', [id, kind]);
    if (!row || row.time_expires <= now) return undefined;
    return { id: row.id, kind: row.kind, userId: row.user_id, challenge: (JSON.parse(row.data) as { challenge: string }).challenge, timeExpires: row.time_expires };
  }
}
