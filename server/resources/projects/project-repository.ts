import type { Db } from '../../store/db.ts';
import type { Role, Schemas } from '../../lib/api-types.ts';

export interface ProjectRecord {
  id: string;
  ownerId: string;
  name: string;
  color: string;
  sortBy: Schemas['SortBy'] | null;
  artworkId: string | null;
  /** Changes whenever any box of the project changes. */
  boxVersion: number;
  /** Changes with every change to the project itself; its ETag. */
  version: number;
  timeCreated: number;
  timeModified: number;
  /** What the project's boxes hold and when they last changed, when the query that read it counted them (see CONTENT). */
  content?: ProjectContent;
  /** The artwork's content type, when the query that read it joined the artwork (null: none set); else read apart. */
  artworkContentType?: string | null;
}

/** What a library shows of a project's boxes. */
export interface ProjectContent {
  /** Bytes of its files not in the trash whose bytes have arrived. */
  size: number;
  /** The last change of any of its boxes; null when it has none. */
  boxesModified: number | null;
}

/** Which projects a listing holds: every one the user may see, those they own, or those shared with them. */
export type ProjectFilter = 'all' | 'mine' | 'shared';

export interface ArtworkRecord {
  id: string;
  projectId: string;
  contentType: string;
  size: number;
  timeCreated: number;
}

type ProjectRow = {
  id: string;
  owner_id: string;
  name: string;
  color: string;
  sort_by: string | null;
  artwork_id: string | null;
  box_version: number;
  version: number;
  time_created: number;
  time_modified: number;
  /** Present when the query selected CONTENT. */
  content_size?: number | string | null;
  boxes_modified?: number | string | null;
  /** Present when the query joined the artwork (ARTWORK). */
  artwork_content_type?: string | null;
};

/**
 * The columns of a project's content, for a query on `projects`: the size
 * of its files (not trashed, their bytes arrived: a file awaiting its upload
 * has only a declared size) and the last change of its boxes. Each is read
 * from an index alone (migration 27: boxes_content holds the sizes,
 * boxes_modified answers the MAX in one step), so a library of 1,000
 * projects costs a few milliseconds, whatever their boxes.
 */
const CONTENT = `(SELECT COALESCE(SUM(b.size), 0) FROM boxes b
     WHERE b.project_id = projects.id AND b.kind = 'file' AND b.trashed = 0 AND b.status <> 'awaiting-upload') AS content_size,
   (SELECT MAX(b.time_modified) FROM boxes b WHERE b.project_id = projects.id) AS boxes_modified`;

/** The artwork's content type, for a query on `projects`: with it, a listing signs each artwork's URL without reading it apart. */
const ARTWORK = `(SELECT a.content_type FROM artworks a WHERE a.id = projects.artwork_id) AS artwork_content_type`;

const fromRow = (row: ProjectRow): ProjectRecord => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  color: row.color,
  sortBy: row.sort_by ? JSON.parse(row.sort_by) : null,
  artworkId: row.artwork_id,
  boxVersion: row.box_version,
  version: row.version,
  timeCreated: row.time_created,
  timeModified: row.time_modified,
  ...(row.content_size !== undefined
    ? { content: { size: Number(row.content_size ?? 0), boxesModified: row.boxes_modified === null || row.boxes_modified === undefined ? null : Number(row.boxes_modified) } }
    : {}),
  ...(row.artwork_content_type !== undefined ? { artworkContentType: row.artwork_content_type } : {}),
});

/**
 * The row lock of a read-modify-write. PostgreSQL: FOR NO KEY UPDATE, which
 * blocks other writers of the row but not the foreign-key checks of rows
 * that refer to it (a new box or player of the project). SQLite: nothing,
 * since its transactions are exclusive (BEGIN IMMEDIATE, and one at a time).
 */
export const forUpdate = (db: Db) => (db.dialect === 'postgres' ? ' FOR NO KEY UPDATE' : '');

const roleRank: Record<Role, number> = { viewer: 1, editor: 2, admin: 3, owner: 4 };

export class ProjectRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Inserts a new project, at version 1. */
  async insert(project: Omit<ProjectRecord, 'boxVersion' | 'version'>): Promise<void> {
    await this.db.execute(
      'INSERT INTO projects (id, owner_id, name, color, sort_by, artwork_id, time_created, time_modified) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [project.id, project.ownerId, project.name, project.color, project.sortBy && JSON.stringify(project.sortBy), project.artworkId, project.timeCreated, project.timeModified],
    );
  }

  async get(id: string): Promise<ProjectRecord | undefined> {
    const [row] = await this.db.query<ProjectRow>('SELECT * FROM projects WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  /**
   * Locks the project's row until the end of the transaction, so that the
   * version read with it is still current when the transaction writes, and
   * returns the project. Every box write bumps the project's box_version
   * (BoxRepository) before it changes a box, so holding this lock also
   * keeps the project's boxes still. On SQLite the transaction is already
   * exclusive. Call it inside a transaction.
   */
  async getForUpdate(id: string): Promise<ProjectRecord | undefined> {
    const [row] = await this.db.query<ProjectRow>(`SELECT * FROM projects WHERE id = $1${forUpdate(this.db)}`, [id]);
    return row && fromRow(row);
  }

  /**
   * Changes only the fields given, in one statement that also bumps the
   * version, so two updates of different fields that race both land, with
   * or without a transaction around them. Answers the project as it is
   * after the change; undefined when there is no such project.
   */
  async update(id: string, changes: { name?: string; color?: string; sortBy?: Schemas['SortBy']; artworkId?: string }, now: number): Promise<ProjectRecord | undefined> {
    const [row] = await this.db.query<ProjectRow>(
      `UPDATE projects SET name = COALESCE($2, name), color = COALESCE($3, color), sort_by = COALESCE($4, sort_by),
         artwork_id = COALESCE($5, artwork_id), time_modified = $6, version = version + 1
       WHERE id = $1 RETURNING *`,
      [id, changes.name ?? null, changes.color ?? null, changes.sortBy ? JSON.stringify(changes.sortBy) : null, changes.artworkId ?? null, now],
    );
    return row && fromRow(row);
  }

  /**
   * The caller's role on a project: `owner` for its owner; otherwise the
   * highest role the caller's email was invited with on any of the
   * project's players, if the account's email is verified; undefined when
   * the caller has none.
   *
   * The accounts rules: "Collaborator access by email is granted only to an account
   * whose email is verified (by the mailed link, or by signing up through
   * the invite link sent to that address). Otherwise, with open
   * registration, anyone could sign up as `client@label.com` and inherit
   * what was shared with that address."
   */
  async roleOf(projectId: string, user: { id: string; email: string }): Promise<Role | undefined> {
    return (await this.getWithRole(projectId, user))?.role;
  }

  /** The project and the caller's role on it (one query for its owner, two for anyone else); undefined when it does not exist or the caller has no role. */
  async getWithRole(projectId: string, user: { id: string; email: string }): Promise<{ project: ProjectRecord; role: Role } | undefined> {
    // Most calls are the owner's: the project alone answers them. The collaborators' query is about fifteen times the
    // cost of the primary-key read in SQLite (issue 23), and runs only for someone else's project.
    const [own] = await this.db.query<ProjectRow>('SELECT * FROM projects WHERE id = $1 AND owner_id = $2', [projectId, user.id]);
    if (own) return { project: fromRow(own), role: 'owner' };
    const [row] = await this.db.query<ProjectRow & { invited: string | null }>(
      `SELECT projects.*,
         (SELECT CASE MAX(CASE c.role WHEN 'admin' THEN 3 WHEN 'editor' THEN 2 ELSE 1 END) WHEN 3 THEN 'admin' WHEN 2 THEN 'editor' WHEN 1 THEN 'viewer' END
          FROM player_collaborators c JOIN players p ON p.id = c.player_id
          WHERE p.project_id = projects.id AND c.email = $2
            AND EXISTS (SELECT 1 FROM users u WHERE u.id = $3 AND u.email = c.email AND u.email_verified = 1)) AS invited
       FROM projects WHERE id = $1`,
      [projectId, user.email, user.id],
    );
    if (!row) return undefined;
    const role = row.owner_id === user.id ? 'owner' : (row.invited as Role | null);
    return role ? { project: fromRow(row), role } : undefined;
  }

  /**
   * The projects the user owns (`mine`), those owned by someone else on
   * which the user holds a role by a verified email, as `getWithRole` says
   * (`shared`), or both (`all`); newest first, each with the user's role
   * and its content and artwork, in one query.
   */
  async listForUser(user: { id: string; email: string }, filter: ProjectFilter = 'all'): Promise<Array<ProjectRecord & { role: Role }>> {
    const owned = `SELECT projects.*, ${CONTENT}, ${ARTWORK}, 'owner' AS role FROM projects WHERE owner_id = $1`;
    const shared = `SELECT projects.*, ${CONTENT}, ${ARTWORK}, c.role FROM projects
         JOIN players p ON p.project_id = projects.id
         JOIN player_collaborators c ON c.player_id = p.id
         JOIN users u ON u.id = $1 AND u.email = c.email AND u.email_verified = 1
       WHERE c.email = $2 AND projects.owner_id <> $1`;
    const sql = filter === 'mine' ? owned : filter === 'shared' ? shared : `${owned} UNION ALL ${shared}`;
    const rows = await this.db.query<ProjectRow & { role: string }>(sql, filter === 'mine' ? [user.id] : [user.id, user.email]);
    const byId = new Map<string, ProjectRecord & { role: Role }>();
    for (const row of rows) {
      const seen = byId.get(row.id);
      const role = row.role as Role;
      if (!seen || roleRank[role] > roleRank[seen.role]) byId.set(row.id, { ...fromRow(row), role });
    }
    return [...byId.values()].sort((a, b) => b.timeCreated - a.timeCreated || (a.id < b.id ? -1 : 1));
  }

  /** What a project's boxes hold and when they last changed. */
  async content(id: string): Promise<ProjectContent> {
    const [row] = await this.db.query<ProjectRow>(`SELECT projects.*, ${CONTENT} FROM projects WHERE id = $1`, [id]);
    return row ? fromRow(row).content! : { size: 0, boxesModified: null };
  }

  /**
   * Deletes the project and the jobs that name it; its boxes, artworks, uploads, players (their
   * collaborators and purchases), portal uploads and, through its files,
   * comments go with it (ON DELETE CASCADE). Answers the ids of the portal
   * uploads that were not complete, whose partial bytes lie outside the
   * database; undefined when there was no such project. Call it inside a
   * transaction.
   */
  async delete(id: string): Promise<{ unfinishedPortalUploads: string[] } | undefined> {
    const portal = await this.db.query<{ id: string }>('SELECT id FROM portal_uploads WHERE project_id = $1 AND time_completed IS NULL', [id]);
    // The jobs that name it (its files' analyses), as deleting an account removes those of its projects: nothing is left to analyse.
    await this.db.execute(`DELETE FROM jobs WHERE payload LIKE $1 ESCAPE '\\'`, [`%${id.replace(/[\\%_]/g, (char) => `\\${char}`)}%`]);
    const deleted = await this.db.query<{ id: string }>('DELETE FROM projects WHERE id = $1 RETURNING id', [id]);
    return deleted.length === 1 ? { unfinishedPortalUploads: portal.map((row) => row.id) } : undefined;
  }

  async insertArtwork(artwork: ArtworkRecord): Promise<void> {
    await this.db.execute('INSERT INTO artworks (id, project_id, content_type, size, time_created) VALUES ($1, $2, $3, $4, $5)', [
      artwork.id,
      artwork.projectId,
      artwork.contentType,
      artwork.size,
      artwork.timeCreated,
    ]);
  }

  async getArtwork(id: string): Promise<ArtworkRecord | undefined> {
    const [row] = await this.db.query<{ id: string; project_id: string; content_type: string; size: number; time_created: number }>(
      'SELECT * FROM artworks WHERE id = $1',
      [id],
    );
    return row && { id: row.id, projectId: row.project_id, contentType: row.content_type, size: row.size, timeCreated: row.time_created };
  }
}
