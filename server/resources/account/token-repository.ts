import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';
import type { TokenHolder } from '../../http/auth.ts';

export interface TokenRecord {
  id: string;
  userId: string;
  email: string;
  label: string | null;
  /** The scopes the token holds; null for every scope (tokens minted before scopes, and by the admin CLI). */
  scopes: string[] | null;
  timeExpires: number | null;
  timeLastUsed: number | null;
  timeCreated: number;
  timeRevoked: number | null;
}

/**
 * Tokens are 256 random bits, so a plain SHA-256 is enough to store them:
 * a slow password hash protects guessable secrets, and these are not.
 * crypto.hash, one call: every API request with a token hashes it, and
 * createHash's Hash object (update, digest) cost about twice as much.
 */
export const hashToken = (token: string) => hash('sha256', token, 'hex');

type TokenRow = {
  id: string;
  user_id: string;
  email: string;
  label: string | null;
  scopes: string | null;
  time_expires: number | null;
  time_last_used: number | null;
  time_created: number;
  time_revoked: number | null;
};

const fromRow = (row: TokenRow): TokenRecord => ({
  id: row.id,
  userId: row.user_id,
  email: row.email,
  label: row.label,
  scopes: row.scopes === null ? null : JSON.parse(row.scopes),
  timeExpires: row.time_expires === null ? null : Number(row.time_expires),
  timeLastUsed: row.time_last_used === null ? null : Number(row.time_last_used),
  timeCreated: row.time_created,
  timeRevoked: row.time_revoked,
});

/** Every token starts with this, so that secret scanners can recognise a leaked one. */
export const TOKEN_PREFIX = 'as_';

export class TokenRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Creates a token and returns its secret, which is shown once and never
   * stored. `scopes` null (the default) gives every scope; `expires` null,
   * none.
   */
  async create(
    userId: string,
    label: string | null,
    now: number,
    { scopes = null, expires = null }: { scopes?: string[] | null; expires?: number | null } = {},
  ): Promise<{ id: string; secret: string }> {
    const id = newId('tok');
    const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    await this.db.execute('INSERT INTO tokens (id, user_id, token_hash, label, scopes, time_expires, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      id,
      userId,
      hashToken(secret),
      label,
      scopes === null ? null : JSON.stringify(scopes),
      expires,
      now,
    ]);
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

  /** The holder of a token that is not revoked (expiry and a disabled account are the caller's to check). */
  async findHolder(secret: string): Promise<TokenHolder | undefined> {
    const [row] = await this.db.query<{
      token_id: string;
      user_id: string;
      email: string | null;
      scopes: string | null;
      disabled: number;
      time_expires: number | null;
      time_last_used: number | null;
      audience: string | null;
      client_id: string | null;
      grant_id: string | null;
    }>(
      // Every API request runs this. The account's columns come from scalar subqueries on its primary key, not a JOIN:
      // in SQLite this is about a fifth of the join's time (10 µs against 50 µs, bench/README.md, issue 23), for the
      // same row. A token's account always exists (tokens.user_id REFERENCES users ON DELETE CASCADE); the check of
      // `email` below keeps the join's meaning regardless: users.email is NOT NULL, so a null one is a missing account
      // (one subquery fewer than reading users.id too, issue 32).
      `SELECT t.id AS token_id, t.user_id, t.scopes, t.time_expires, t.time_last_used, t.audience, t.client_id, t.grant_id,
         (SELECT users.email FROM users WHERE users.id = t.user_id) AS email,
         (SELECT users.disabled FROM users WHERE users.id = t.user_id) AS disabled
       FROM tokens t WHERE t.token_hash = $1 AND t.time_revoked IS NULL`,
      [hashToken(secret)],
    );
    if (!row || row.email === null) return undefined;
    return {
      tokenId: row.token_id,
      user: { id: row.user_id, email: row.email },
      scopes: row.scopes === null ? null : JSON.parse(row.scopes),
      disabled: row.disabled === 1,
      timeExpires: row.time_expires === null ? null : Number(row.time_expires),
      timeLastUsed: row.time_last_used === null ? null : Number(row.time_last_used),
      audience: row.audience,
      // Set on an OAuth access token's row only (oauth-repository.ts, recordAccessToken).
      appId: row.client_id,
      grantId: row.grant_id,
    };
  }

  /** Whether a token with this secret was ever made, revoked or not: a revoked one must stay refused, even in the sandbox. */
  async exists(secret: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 AS known FROM tokens WHERE token_hash = $1', [hashToken(secret)])).length > 0;
  }

  /** Records a use of the token, for its `lastUsedAt`. */
  async touch(id: string, now: number): Promise<void> {
    await this.db.execute('UPDATE tokens SET time_last_used = $2 WHERE id = $1', [id, now]);
  }

  async list(email?: string): Promise<TokenRecord[]> {
    const rows = await this.db.query<TokenRow>(
      `SELECT tokens.id, tokens.user_id, users.email, tokens.label, tokens.scopes, tokens.time_expires, tokens.time_last_used, tokens.time_created, tokens.time_revoked
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

  /**
   * The account's personal tokens that are not revoked, expired ones included, newest first (GET /me/tokens). The
   * access tokens of the apps it let in are not among them: they are listed, and ended, as connected apps.
   */
  async listActiveOf(userId: string): Promise<TokenRecord[]> {
    const rows = await this.db.query<TokenRow>(
      `SELECT tokens.id, tokens.user_id, users.email, tokens.label, tokens.scopes, tokens.time_expires, tokens.time_last_used, tokens.time_created, tokens.time_revoked
       FROM tokens JOIN users ON users.id = tokens.user_id
       WHERE tokens.user_id = $1 AND tokens.time_revoked IS NULL AND tokens.grant_id IS NULL
       ORDER BY tokens.time_created DESC, tokens.id`,
      [userId],
    );
    return rows.map(fromRow);
  }

  /**
   * Revokes every personal token of the account (a new password takes the account back: session-service.ts's
   * endAccessOf); answers how many of them still worked, the expired ones revoked too but not counted. The access
   * tokens of the apps it let in are not personal tokens: they end with their grants (OAuthRepository.endGrantsOf).
   */
  async revokeAllPersonalOf(userId: string, now: number): Promise<number> {
    const revoked = await this.db.query<{ time_expires: number | null }>(
      'UPDATE tokens SET time_revoked = $2 WHERE user_id = $1 AND time_revoked IS NULL AND grant_id IS NULL RETURNING time_expires',
      [userId, now],
    );
    return revoked.filter((row) => row.time_expires === null || Number(row.time_expires) > now).length;
  }

  /** Revokes one of the account's own tokens, and answers it; undefined when it has no such token, or it is revoked already. */
  async revokeOwn(userId: string, id: string, now: number): Promise<TokenRecord | undefined> {
    if ((await this.db.execute('UPDATE tokens SET time_revoked = $3 WHERE id = $1 AND user_id = $2 AND time_revoked IS NULL AND grant_id IS NULL', [id, userId, now])) !== 1) return undefined;
    const [row] = await this.db.query<TokenRow>(
      `SELECT tokens.id, tokens.user_id, users.email, tokens.label, tokens.scopes, tokens.time_expires, tokens.time_last_used, tokens.time_created, tokens.time_revoked
       FROM tokens JOIN users ON users.id = tokens.user_id WHERE tokens.id = $1`,
      [id],
    );
    return row && fromRow(row);
  }
}

