import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

export interface TokenRecord {
  id: string;
  userId: string;
  email: string;
  label: string | null;
  timeCreated: number;
  timeRevoked: number | null;
}

/**
 * Tokens are 256 random bits, so a plain SHA-256 is enough to store them:
 * a slow password hash protects guessable secrets, and these are not.
 */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

type TokenRow = { id: string; user_id: string; email: string; label: string | null; time_created: number; time_revoked: number | null };

const fromRow = (row: TokenRow): TokenRecord => ({
  id: row.id,
  userId: row.user_id,
  email: row.email,
  label: row.label,
  timeCreated: row.time_created,
  timeRevoked: row.time_revoked,
});

export class TokenRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Creates a token and returns its secret, which is shown once and never stored. */
  async create(userId: string, label: string | null, now: number): Promise<{ id: string; secret: string }> {
    const id = newId('tok');
    const secret = 'as_' + randomBytes(32).toString('base64url');
    await this.db.execute('INSERT INTO tokens (id, user_id, token_hash, label, time_created) VALUES ($1, $2, $3, $4, $5)', [id, userId, hashToken(secret), label, now]);
    return { id, secret };
  }

  /**
   * Records a token the caller chose, as its hash, like any other. Only the
   * sandbox does this (any token it has not seen gets an account); a server
   * that is not a sandbox only ever makes its own, random ones.
   */
  async register(userId: string, secret: string, label: string | null, now: number): Promise<void> {
    await this.db.execute('INSERT INTO tokens (id, user_id, token_hash, label, time_created) VALUES ($1, $2, $3, $4, $5)', [newId('tok'), userId, hashToken(secret), label, now]);
  }

  /** The user an active token belongs to. */
  async findActiveUser(secret: string): Promise<{ id: string; email: string } | undefined> {
    const [row] = await this.db.query<{ id: string; email: string }>(
      'SELECT users.id, users.email FROM tokens JOIN users ON users.id = tokens.user_id WHERE tokens.token_hash = $1 AND tokens.time_revoked IS NULL',
      [hashToken(secret)],
    );
    return row && { id: row.id, email: row.email };
  }

  async list(email?: string): Promise<TokenRecord[]> {
    const rows = await this.db.query<TokenRow>(
      `SELECT tokens.id, tokens.user_id, users.email, tokens.label, tokens.time_created, tokens.time_revoked
       FROM tokens JOIN users ON users.id = tokens.user_id
       WHERE $1 = '' OR users.email = $1
       ORDER BY tokens.time_created, tokens.id`,
      [email ? email.trim().toLowerCase() : ''],
    );
    return rows.map(fromRow);
  }

  /** Revokes a token; answers false when there is no active token with this id. */
  async revoke(id: string, now: number): Promise<boolean> {
    return (await this.db.execute('UPDATE tokens SET time_revoked = $2 WHERE id = $1 AND time_revoked IS NULL', [id, now])) === 1;
  }
}

/** A token as its owner sees it: what it may do, when it expires, when it was last used. */
export interface OwnTokenRecord {
  id: string;
  label: string | null;
  /** Null for every scope: tokens made before scopes existed. */
  scopes: string[] | null;
  timeExpires: number | null;
  timeLastUsed: number | null;
  timeCreated: number;
}

type OwnTokenRow = { id: string; label: string | null; scopes: string | null; time_expires: number | null; time_last_used: number | null; time_created: number };

const ownFromRow = (row: OwnTokenRow): OwnTokenRecord => ({
  id: row.id,
  label: row.label,
  scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as string[]),
  timeExpires: row.time_expires === null ? null : Number(row.time_expires),
  timeLastUsed: row.time_last_used === null ? null : Number(row.time_last_used),
  timeCreated: Number(row.time_created),
});

/**
 * The tokens an account manages itself (GET/POST/DELETE /me/tokens) and
 * those the admin CLI mints with an expiry: scoped, perhaps expiring. Over
 * the same table as TokenRepository, whose lookup by secret authenticates
 * them all.
 */
export class OwnTokenRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Makes a token and answers its secret, shown once: only its hash is stored. The fixed `as_` prefix lets secret scanners recognise a leaked one. */
  async mint(userId: string, fields: { label: string | null; scopes: string[] | null; timeExpires: number | null }, now: number): Promise<OwnTokenRecord & { secret: string }> {
    const id = newId('tok');
    const secret = 'as_' + randomBytes(32).toString('base64url');
    await this.db.execute('INSERT INTO tokens (id, user_id, token_hash, label, scopes, time_expires, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      id,
      userId,
      hashToken(secret),
      fields.label,
      fields.scopes && JSON.stringify(fields.scopes),
      fields.timeExpires,
      now,
    ]);
    return { id, label: fields.label, scopes: fields.scopes, timeExpires: fields.timeExpires, timeLastUsed: null, timeCreated: now, secret };
  }

  /** The account's tokens that are not revoked, expired ones included. */
  async listOf(userId: string): Promise<OwnTokenRecord[]> {
    const rows = await this.db.query<OwnTokenRow>(
      'SELECT id, label, scopes, time_expires, time_last_used, time_created FROM tokens WHERE user_id = $1 AND time_revoked IS NULL ORDER BY time_created DESC, id',
      [userId],
    );
    return rows.map(ownFromRow);
  }

  /** Revokes one of the account's own tokens, and answers it; undefined when it has no such token, or it is revoked already. */
  async revokeOwn(userId: string, id: string, now: number): Promise<OwnTokenRecord | undefined> {
    const [row] = await this.db.query<OwnTokenRow>(
      'UPDATE tokens SET time_revoked = $3 WHERE id = $1 AND user_id = $2 AND time_revoked IS NULL RETURNING id, label, scopes, time_expires, time_last_used, time_created',
      [id, userId, now],
    );
    return row && ownFromRow(row);
  }
}
