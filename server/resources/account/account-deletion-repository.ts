/**
 * Deleting an account, rows first (the bytes of its files after the commit,
 * by the service). What refers to a user, and what becomes of it:
 *
 * - its projects (projects.owner_id, no ON DELETE CASCADE): deleted, and
 *   with each (ON DELETE CASCADE) its boxes, artworks, uploads, players and
 *   their collaborators and purchases, portal uploads, and the comments on
 *   its files with their reactions;
 * - its players (players.owner_id, no cascade): they are its projects'
 *   players (the owner of a player is the owner of its project), deleted
 *   first;
 * - tokens, sessions, one-time links made for it, passkey challenges,
 *   passkeys, identities, security events, webhooks with their deliveries:
 *   ON DELETE CASCADE from users;
 * - in other people's projects, which stay as they are: the files it
 *   uploaded there keep no uploader (boxes.uploader_id), the upload records
 *   pass to the project's owner (uploads.user_id is NOT NULL: the sweep of
 *   unfinished uploads still finds them), the players it made there forget
 *   who made them (players.created_by), its comments lose their author
 *   (ON DELETE SET NULL), its reactions go; the collaborator entries and
 *   pending one-time links with its address go too, so that no row names
 *   the person;
 * - the links it made for others (one_time_links.created_by) forget their
 *   maker (ON DELETE SET NULL), and still work;
 * - the jobs that name it, its projects or its webhooks' deliveries
 *   (analyses of its files, deliveries, mails to its address), whatever
 *   their state: a worker running one finds its lease gone and its file
 *   deleted, as when a file is deleted meanwhile;
 * - its rate-limit counters go.
 */
import type { Db } from '../../store/db.ts';
import { rateLimitTable } from '../../store/db.ts';

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards in it escaped (ESCAPE '\'). */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

export class AccountDeletionRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Deletes the account and all it owns; answers the ids of its projects,
   * whose blobs the caller removes once this has committed. Call it inside a
   * transaction: every statement lands, or none does.
   */
  async deleteAccount(userId: string): Promise<{ projectIds: string[] } | undefined> {
    const [user] = await this.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId]);
    if (!user) return undefined;
    const projectIds = (await this.db.query<{ id: string }>('SELECT id FROM projects WHERE owner_id = $1', [userId])).map((row) => row.id);

    // What it left in other people's projects.
    await this.db.execute('UPDATE boxes SET uploader_id = NULL WHERE uploader_id = $1', [userId]);
    await this.db.execute(
      'UPDATE uploads SET user_id = (SELECT projects.owner_id FROM projects WHERE projects.id = uploads.project_id) WHERE user_id = $1',
      [userId],
    );
    await this.db.execute('UPDATE players SET created_by = NULL WHERE created_by = $1', [userId]);
    await this.db.execute('DELETE FROM comment_reactions WHERE reactor = $1', [`user:${userId}`]);
    await this.db.execute('DELETE FROM player_collaborators WHERE email = $1', [user.email]);
    await this.db.execute('DELETE FROM one_time_links WHERE email = $1 AND time_used IS NULL', [user.email]);

    // The jobs that name it, its projects (their files' analyses) or its webhooks' deliveries, before those go.
    // (An id's `_` is a LIKE wildcard that also matches itself; ids are 80 random bits, so nothing else matches.)
    await this.db.execute(`DELETE FROM jobs WHERE payload LIKE $1 ESCAPE '\\' OR payload LIKE $2 ESCAPE '\\'`, [containing(userId), containing(user.email)]);
    await this.db.execute(
      `DELETE FROM jobs WHERE EXISTS (SELECT 1 FROM projects p WHERE p.owner_id = $1 AND jobs.payload LIKE '%' || p.id || '%')
          OR EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE w.user_id = $1 AND jobs.payload LIKE '%' || d.id || '%')`,
      [userId],
    );

    // What it owns.
    await this.db.execute('DELETE FROM players WHERE owner_id = $1', [userId]);
    await this.db.execute('DELETE FROM projects WHERE owner_id = $1', [userId]);
    await this.db.execute('DELETE FROM users WHERE id = $1', [userId]);

    // Throwaway counters, keyed by the account's id or its address (the per-user rate limit, the sign-in attempt limits).
    await this.db.execute(`DELETE FROM ${rateLimitTable} WHERE key LIKE $1 ESCAPE '\\' OR key LIKE $2 ESCAPE '\\'`, [containing(userId), containing(user.email)]);
    return { projectIds };
  }
}
