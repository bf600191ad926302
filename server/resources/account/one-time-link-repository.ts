import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

/** setup: the first account; invitation: an administrator's invitation to sign up; reset: a password reset; verify: an email address's verification. */
export type OneTimeLinkKind = 'setup' | 'invitation' | 'reset' | 'verify';

export interface OneTimeLinkRecord {
  id: string;
  kind: OneTimeLinkKind;
  userId: string | null;
  email: string | null;
  data: Record<string, unknown>;
  createdBy: string | null;
  timeCreated: number;
  timeExpires: number;
  timeUsed: number | null;
}

type LinkRow = {
  id: string;
  kind: OneTimeLinkKind;
  user_id: string | null;
  email: string | null;
  data: string;
  created_by: string | null;
  time_created: number;
  time_expires: number;
  time_used: number | null;
};

const fromRow = (row: LinkRow): OneTimeLinkRecord => ({
  id: row.id,
  kind: row.kind,
  userId: row.user_id,
  email: row.email,
  data: JSON.parse(row.data),
  createdBy: row.created_by,
  timeCreated: Number(row.time_created),
  timeExpires: Number(row.time_expires),
  timeUsed: row.time_used === null ? null : Number(row.time_used),
});

/** 256 random bits: SHA-256 is enough to keep them, and the database alone gives no working link. */
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Links that work once (the setup link, invitations, password resets, email verifications), known by their secret's hash. */
export class OneTimeLinkRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async create(
    kind: OneTimeLinkKind,
    link: { userId?: string | null; email?: string | null; data?: Record<string, unknown>; createdBy?: string | null; ttlMs: number },
    now: number,
  ): Promise<{ id: string; secret: string; expires: number }> {
    const id = newId('otl');
    const secret = randomBytes(32).toString('base64url');
    const expires = now + link.ttlMs;
    await this.db.execute(
      'INSERT INTO one_time_links (id, kind, secret_hash, user_id, email, data, created_by, time_created, time_expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [id, kind, hashSecret(secret), link.userId ?? null, link.email ?? null, JSON.stringify(link.data ?? {}), link.createdBy ?? null, now, expires],
    );
    return { id, secret, expires };
  }

  /** The link a secret opens, while unused and unexpired, without using it (to show what it is for). */
  async peek(kind: OneTimeLinkKind, secret: string, now: number): Promise<OneTimeLinkRecord | undefined> {
    const [row] = await this.db.query<LinkRow>('SELECT * FROM one_time_links WHERE secret_hash = $1 AND kind = $2 AND time_used IS NULL AND time_expires > $3', [hashSecret(secret), kind, now]);
    return row && fromRow(row);
  }

  /**
   * Uses the link: one UPDATE, so of two requests racing with one link only
   * one gets it. Undefined when it is unknown, used, expired or another kind.
   */
  async consume(kind: OneTimeLinkKind, secret: string, now: number): Promise<OneTimeLinkRecord | undefined> {
    const [row] = await this.db.query<LinkRow>(
      'UPDATE one_time_links SET time_used = $3 WHERE secret_hash = $1 AND kind = $2 AND time_used IS NULL AND time_expires > $3 RETURNING *',
      [hashSecret(secret), kind, now],
    );
    return row && fromRow(row);
  }

  /** How many links of a kind were made for an account since `since`, used or not: the mailed ones are capped by it. */
  async countSince(kind: OneTimeLinkKind, userId: string, since: number): Promise<number> {
    const [row] = await this.db.query<{ made: number | string }>('SELECT COUNT(*) AS made FROM one_time_links WHERE kind = $1 AND user_id = $2 AND time_created >= $3', [kind, userId, since]);
    return Number(row?.made ?? 0);
  }

  /** Ends every unused link of a kind (a new setup link replaces the last; a reset link dies when another is used). */
  async revokeAll(kind: OneTimeLinkKind, userId: string | null, now: number): Promise<void> {
    await this.db.execute(
      'UPDATE one_time_links SET time_used = $3 WHERE kind = $1 AND time_used IS NULL AND (user_id = $2 OR ($2 IS NULL AND user_id IS NULL))',
      [kind, userId, now],
    );
  }
}
