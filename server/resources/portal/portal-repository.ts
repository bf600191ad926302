import type { Db } from '../../store/db.ts';
import { forUpdate } from '../projects/project-repository.ts';

/** One resumable upload through a player's portal: a tus upload (its id) filling one file box. */
export interface PortalUploadRecord {
  /** The tus upload id, which is also the last segment of its URL. */
  id: string;
  playerId: string;
  projectId: string;
  boxId: string;
  /** Upload-Length, as declared when the upload was created. */
  size: number;
  /**
   * The room the upload takes in its portal's total and its owner's quota
   * while it is unfinished (migration 13): the bytes stored, and while a
   * request streams bytes to it, the end that request announced.
   */
  roomBytes: number;
  timeCreated: number;
  timeCompleted: number | null;
}

type PortalUploadRow = {
  id: string;
  player_id: string;
  project_id: string;
  box_id: string;
  size: number | string;
  room_bytes: number | string;
  time_created: number | string;
  time_completed: number | string | null;
};

const fromRow = (row: PortalUploadRow): PortalUploadRecord => ({
  id: row.id,
  playerId: row.player_id,
  projectId: row.project_id,
  boxId: row.box_id,
  size: Number(row.size),
  roomBytes: Number(row.room_bytes),
  timeCreated: Number(row.time_created),
  timeCompleted: row.time_completed === null ? null : Number(row.time_completed),
});

/** The uploads of upload portals (migration 9), and the folder each portal files them in. */
export class PortalRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(upload: Omit<PortalUploadRecord, 'timeCompleted'>): Promise<void> {
    await this.db.execute('INSERT INTO portal_uploads (id, player_id, project_id, box_id, size, room_bytes, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      upload.id, upload.playerId, upload.projectId, upload.boxId, upload.size, upload.roomBytes, upload.timeCreated,
    ]);
  }

  async get(id: string): Promise<PortalUploadRecord | undefined> {
    const [row] = await this.db.query<PortalUploadRow>('SELECT * FROM portal_uploads WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  /** Marks the upload complete, once; answers false when it was already (two finishing requests: one wins). */
  async complete(id: string, now: number): Promise<boolean> {
    return (await this.db.execute('UPDATE portal_uploads SET time_completed = $2 WHERE id = $1 AND time_completed IS NULL', [id, now])) === 1;
  }

  /** The uploads not finished that began before `before`: the candidates of the sweep of abandoned ones. */
  async listUnfinished(before: number): Promise<PortalUploadRecord[]> {
    const rows = await this.db.query<PortalUploadRow>('SELECT * FROM portal_uploads WHERE time_completed IS NULL AND time_created < $1 ORDER BY time_created LIMIT 1000', [before]);
    return rows.map(fromRow);
  }

  /** The unfinished uploads of one portal: what closing it gives up. */
  async listUnfinishedOf(playerId: string): Promise<PortalUploadRecord[]> {
    const rows = await this.db.query<PortalUploadRow>('SELECT * FROM portal_uploads WHERE player_id = $1 AND time_completed IS NULL', [playerId]);
    return rows.map(fromRow);
  }

  /** Sets the room an unfinished upload takes; a finished or deleted one is left alone. */
  async setRoom(id: string, bytes: number): Promise<void> {
    await this.db.execute('UPDATE portal_uploads SET room_bytes = $2 WHERE id = $1 AND time_completed IS NULL', [id, bytes]);
  }

  async delete(id: string): Promise<void> {
    await this.db.execute('DELETE FROM portal_uploads WHERE id = $1', [id]);
  }

  /**
   * The bytes a portal has taken in, for its total cap: the sizes of its
   * complete uploads, and the room of those under way (the bytes they have,
   * not the length they declared), whose files still exist. A file its
   * owner deleted frees its room.
   */
  async bytesTakenBy(playerId: string): Promise<number> {
    const [row] = await this.db.query<{ used: number | string | null }>(
      `SELECT COALESCE(SUM(CASE WHEN u.time_completed IS NULL THEN u.room_bytes ELSE u.size END), 0) AS used
         FROM portal_uploads u JOIN boxes b ON b.id = u.box_id WHERE u.player_id = $1`,
      [playerId],
    );
    return Number(row?.used ?? 0);
  }

  /** The folder the player's portal made for its uploads, if it made one; read with the player's row locked. */
  async folderOf(playerId: string): Promise<string | null | undefined> {
    const [row] = await this.db.query<{ portal_folder_id: string | null }>(`SELECT portal_folder_id FROM players WHERE id = $1${forUpdate(this.db)}`, [playerId]);
    return row?.portal_folder_id;
  }

  /**
   * The files that came in through a portal (they have an uploader's name)
   * and still sit in a held folder, directly or in the stack a portal put
   * them in, on these projects: finished uploads only, not in the trash;
   * newest first. Read for the owner's inbox (resources/comments).
   */
  async heldFiles(projectIds: readonly string[]): Promise<Array<{ boxId: string; projectId: string; projectName: string }>> {
    if (projectIds.length === 0) return [];
    const rows = await this.db.query<{ id: string; project_id: string; project_name: string }>(
      `SELECT f.id, f.project_id, p.name AS project_name
         FROM boxes f
         JOIN projects p ON p.id = f.project_id
         JOIN boxes parent ON parent.id = f.parent_id
         LEFT JOIN boxes grandparent ON grandparent.id = parent.parent_id AND parent.kind = 'stack'
        WHERE f.project_id IN (${projectIds.map((_, i) => `$${i + 1}`).join(', ')})
          AND f.kind = 'file' AND f.trashed = 0 AND f.uploader_name IS NOT NULL AND f.status <> 'awaiting-upload'
          AND (parent.held = 1 OR grandparent.held = 1)
        ORDER BY f.time_created DESC, f.id`,
      [...projectIds],
    );
    return rows.map((row) => ({ boxId: row.id, projectId: row.project_id, projectName: row.project_name }));
  }

  async setFolder(playerId: string, folderId: string): Promise<void> {
    await this.db.execute('UPDATE players SET portal_folder_id = $2 WHERE id = $1', [playerId, folderId]);
  }
}
