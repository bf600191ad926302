import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

/** How long sessions live (SESSION_IDLE_DAYS, SESSION_MAX_DAYS). */
export interface SessionLifetimes {
  /** A session not used for this long has ended. */
  idleMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  maxMs: number;
}

export interface SessionRecord {
  id: string;
  userId: string;
  method: string;
  userAgent: string | null;
  address: string | null;
  timeCreated: number;
  timeLastSeen: number;
}

type SessionRow = { id: string; user_id: string; method: string; user_agent: string | null; address: string | null; time_created: number; time_last_seen: number };

const fromRow = (row: SessionRow): SessionRecord => ({
  id: row.id,
  userId: row.user_id,
  method: row.method,
  userAgent: row.user_agent,
  address: row.address,
  timeCreated: Number(row.time_created),
  timeLastSeen: Number(row.time_last_seen),
});

/** The secret is 256 random bits, so SHA-256 is enough to keep it: a stolen table holds nothing a browser can send. */
// crypto.hash, one call: every request with a session cookie hashes it, and createHash's Hash object cost twice as much.
const hashSecret = (secret: string) => hash('sha256', secret, 'hex');

/** Browser sessions, in the database so that every API process behind one load balancer knows them. */
export class SessionRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** A new session; its secret goes in the cookie and is never stored. */
  async create(userId: string, method: string, client: { userAgent: string | null; address: string | null }, now: number): Promise<{ id: string; secret: string }> {
    const id = newId('ses');
    const secret = randomBytes(32).toString('base64url');
    await this.db.execute(
      'INSERT INTO sessions (id, user_id, secret_hash, method, user_agent, address, time_created, time_last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)',
      [id, userId, hashSecret(secret), method, client.userAgent?.slice(0, 512) ?? null, client.address, now],
    );
    return { id, secret };
  }

  /** The session a cookie's secret opens, while it has neither idled out nor reached its end, and its account is not disabled. */
  async findActive(secret: string, now: number, lifetimes: SessionLifetimes) {
    const [row] = await this.db.query<SessionRow & { email: string }>(
      // Every request with a session cookie runs this: the account's columns come from scalar subqueries on its primary
      // key, not a JOIN, which in SQLite costs about five times as much for the same row (issue 23; see the tokens' findHolder).
      `SELECT * FROM (
         SELECT sessions.*, (SELECT users.email FROM users WHERE users.id = sessions.user_id) AS email,
           (SELECT users.disabled FROM users WHERE users.id = sessions.user_id) AS disabled
         FROM sessions WHERE sessions.secret_hash = $1 AND sessions.time_last_seen > $2 AND sessions.time_created > $3
       ) AS found WHERE found.disabled = 0`,
      [hashSecret(secret), now - lifetimes.idleMs, now - lifetimes.maxMs],
    );
    if (!row) return undefined;
    const session = fromRow(row);
    return { sessionId: session.id, user: { id: session.userId, email: row.email }, method: session.method, timeCreated: session.timeCreated, timeLastSeen: session.timeLastSeen };
  }

  async touch(id: string, now: number): Promise<void> {
    await this.db.execute('UPDATE sessions SET time_last_seen = $2 WHERE id = $1 AND time_last_seen < $2', [id, now]);
  }

  /** The account's sessions that are still valid, newest first. */
  async listOf(userId: string, now: number, lifetimes: SessionLifetimes): Promise<SessionRecord[]> {
    const rows = await this.db.query<SessionRow>(
      'SELECT * FROM sessions WHERE user_id = $1 AND time_last_seen > $2 AND time_created > $3 ORDER BY time_created DESC, id DESC',
      [userId, now - lifetimes.idleMs, now - lifetimes.maxMs],
    );
    return rows.map(fromRow);
  }

  /** Ends one session of the account; false when it has no such session. */
  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.db.execute('DELETE FROM sessions WHERE id = $1 AND user_id = $2', [id, userId])) === 1;
  }

  /** Ends every session of the account, but `except`; answers how many ended. */
  async deleteAllOf(userId: string, except?: string): Promise<number> {
    return this.db.execute('DELETE FROM sessions WHERE user_id = $1 AND id <> $2', [userId, except ?? '']);
  }

  /** Drops sessions that ended long ago, so the table does not grow for ever. */
  async sweep(now: number, lifetimes: SessionLifetimes): Promise<number> {
    return this.db.execute('DELETE FROM sessions WHERE time_last_seen <= $1 OR time_created <= $2', [now - lifetimes.idleMs, now - lifetimes.maxMs]);
  }
}
