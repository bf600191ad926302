/**
 * The idempotency keys of the accounts (table idempotency_keys, migrations
 * 24 and 30): who holds a key while its request runs, and the first answer
 * once there is one. The rules of the header are in idempotency.ts; this is
 * their storage, on either database. A key belongs to an account and to the
 * credential that sent it (its `KeyOwner`).
 *
 * A key is claimed atomically: `INSERT … ON CONFLICT DO NOTHING` on the
 * primary key (user_id, credential, idempotency_key), so of two requests racing with one
 * key, on one process or on two, exactly one inserts the row and runs; the
 * other finds the row. A claim is a random token with a lease, renewed while
 * its request runs: a process that dies mid-request leaves a claim that
 * lapses, after which a retry of the same request may take the key over.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/db.ts';

/** How long a key is remembered after its first use: Stripe's 24 hours. */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** How long a claim holds without being renewed; its request renews it well before (idempotency.ts). */
export const CLAIM_LEASE_MS = 60_000;

/** An answer as it is stored and replayed: its status, the headers that describe its body, and the body's bytes. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Seals what is stored (the answers hold what their requests made: a webhook's secret, an invitation link) and opens it again. */
export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * Whose a key is: the account, and the credential acting for it (idempotency.ts's credentialOf), so that two apps
 * of one account, or an app and the person, each have their own keys and answers.
 */
export interface KeyOwner {
  userId: string;
  credential: string;
}

/** What a request finds when it presents a key. */
export type KeyState =
  /** The key is this request's now: run it, then complete or release the claim. */
  | { kind: 'claimed'; claim: string }
  /** The key's first request has answered: this is that answer. */
  | { kind: 'answered'; answer: StoredAnswer }
  /** The key's first request is still running. */
  | { kind: 'running' }
  /** The key was used for another request (another operation, body or If-Match): `operation` is that one's. */
  | { kind: 'reused'; operation: string };

interface KeyRow extends Record<string, string | number | null> {
  fingerprint: string;
  operation: string;
  claim: string | null;
  claim_expires: number | null;
  response: string | null;
  expires: number;
}

export class IdempotencyKeys {
  private db: Db;
  private sealer: Sealer;

  constructor(db: Db, sealer: Sealer) {
    this.db = db;
    this.sealer = sealer;
  }

  /** Claims `key` of `owner` for a request with this fingerprint, or says what holds it. */
  async claim(owner: KeyOwner, key: string, fingerprint: string, operation: string, now: number): Promise<KeyState> {
    const { userId, credential } = owner;
    // A key's row can vanish between the statements below (its claim released after a 5xx, or swept): then try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = randomBytes(16).toString('base64url');
      const inserted = await this.db.execute(
        `INSERT INTO idempotency_keys (user_id, credential, idempotency_key, fingerprint, operation, claim, claim_expires, response, time_created, expires)
         VALUES ($1, $9, $2, $3, $4, $5, $6, NULL, $7, $8)
         ON CONFLICT (user_id, credential, idempotency_key) DO NOTHING`,
        [userId, key, fingerprint, operation, claim, now + CLAIM_LEASE_MS, now, now + KEY_LIFETIME_MS, credential],
      );
      if (inserted === 1) return { kind: 'claimed', claim };
      // Taken over, in one statement so that of two retries only one wins: a key past its 24 hours is new again, whatever
      // it was used for; a claim that lapsed unanswered (its process died) passes to a retry of the same request.
      const takenOver = await this.db.execute(
        `UPDATE idempotency_keys
            SET fingerprint = $3, operation = $4, claim = $5, claim_expires = $6, response = NULL, time_created = $7, expires = $8
          WHERE user_id = $1 AND credential = $9 AND idempotency_key = $2
            AND (expires <= $7 OR (response IS NULL AND claim_expires <= $7 AND fingerprint = $3))`,
        [userId, key, fingerprint, operation, claim, now + CLAIM_LEASE_MS, now, now + KEY_LIFETIME_MS, credential],
      );
      if (takenOver === 1) return { kind: 'claimed', claim };
      const [row] = await this.db.query<KeyRow>(
        'SELECT fingerprint, operation, claim, claim_expires, response, expires FROM idempotency_keys WHERE user_id = $1 AND credential = $3 AND idempotency_key = $2',
        [userId, key, credential],
      );
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { kind: 'reused', operation: row.operation };
      if (row.response === null) return { kind: 'running' };
      return { kind: 'answered', answer: this.opened(row.response) };
    }
    // Three rows gone under us in a row: the key is being released and claimed as fast as we look. Say it is busy.
    return { kind: 'running' };
  }

  /** Extends a claim's lease while its request runs; false when the claim is no longer held. */
  async renew(owner: KeyOwner, key: string, claim: string, now: number): Promise<boolean> {
    const renewed = await this.db.execute(
      'UPDATE idempotency_keys SET claim_expires = $4 WHERE user_id = $1 AND credential = $5 AND idempotency_key = $2 AND claim = $3 AND response IS NULL',
      [owner.userId, key, claim, now + CLAIM_LEASE_MS, owner.credential],
    );
    return renewed === 1;
  }

  /** Stores the answer of the claim's request, to be replayed; false when the claim is no longer held (it lapsed and was taken over). */
  async complete(owner: KeyOwner, key: string, claim: string, answer: StoredAnswer): Promise<boolean> {
    const sealed = this.sealer.seal(JSON.stringify({ status: answer.status, headers: answer.headers, body: answer.body.toString('base64') }));
    const stored = await this.db.execute(
      'UPDATE idempotency_keys SET response = $4, claim = NULL, claim_expires = NULL WHERE user_id = $1 AND credential = $5 AND idempotency_key = $2 AND claim = $3',
      [owner.userId, key, claim, sealed, owner.credential],
    );
    return stored === 1;
  }

  /** Gives the key up: its request is not to be replayed (it failed on the server's side), so a retry runs anew. */
  async release(owner: KeyOwner, key: string, claim: string): Promise<void> {
    await this.db.execute('DELETE FROM idempotency_keys WHERE user_id = $1 AND credential = $4 AND idempotency_key = $2 AND claim = $3', [owner.userId, key, claim, owner.credential]);
  }

  /** Deletes the keys past their 24 hours; answers how many. */
  async sweep(now: number): Promise<number> {
    return this.db.execute('DELETE FROM idempotency_keys WHERE expires <= $1', [now]);
  }

  private opened(sealed: string): StoredAnswer {
    const { status, headers, body } = JSON.parse(this.sealer.open(sealed)) as { status: number; headers: Record<string, string>; body: string };
    return { status, headers, body: Buffer.from(body, 'base64') };
  }
}
