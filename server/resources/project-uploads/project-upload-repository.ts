import type { Db } from '../../store/db.ts';

/** One resumable upload of a project member (migration 23): a tus upload (its id) filling one file box. */
export interface ProjectUploadRecord {
  /** The tus upload id, which is also the last segment of its URL. */
  id: string;
  projectId: string;
  /** Who started it: only they may go on with it. */
  userId: string;
  boxId: string;
  /** Upload-Length, as declared when the upload was created. */
  size: number;
  /**
   * The room the upload takes in its owner's quota while it is unfinished:
   * the bytes stored, and while a request streams bytes to it, the end that
   * request announced (as portal uploads, migration 13).
   */
  roomBytes: number;
  timeCreated: number;
  timeCompleted: number | null;
}

type ProjectUploadRow = {
  id: string;
  project_id: string;
  user_id: string;
  box_id: string;
  size: number | string;
  room_bytes: number | string;
  time_created: number | string;
  time_completed: number | string | null;
};

const fromRow = (row: ProjectUploadRow): ProjectUploadRecord => ({
  id: row.id,
  projectId: row.project_id,
  userId: row.user_id,
  boxId: row.box_id,
  size: Number(row.size),
  roomBytes: Number(row.room_bytes),
  timeCreated: Number(row.time_created),
  timeCompleted: row.time_completed === null ? null : Number(row.time_completed),
});

/** Project members' resumable uploads (migration 23). */
export class ProjectUploadRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(upload: Omit<ProjectUploadRecord, 'timeCompleted'>): Promise<void> {
    await this.db.execute('INSERT INTO project_uploads (id, project_id, user_id, box_id, size, room_bytes, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      upload.id, upload.projectId, upload.userId, upload.boxId, upload.size, upload.roomBytes, upload.timeCreated,
    ]);
  }

  async get(id: string): Promise<ProjectUploadRecord | undefined> {
    const [row] = await this.db.query<ProjectUploadRow>('SELECT * FROM project_uploads WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  /** Marks the upload complete, once; answers false when it was already (two finishing requests: one wins). */
  async complete(id: string, now: number): Promise<boolean> {
    return (await this.db.execute('UPDATE project_uploads SET time_completed = $2 WHERE id = $1 AND time_completed IS NULL', [id, now])) === 1;
  }

  /** The uploads not finished that began before `before`: the candidates of the sweep of abandoned ones. */
  async listUnfinished(before: number): Promise<ProjectUploadRecord[]> {
    const rows = await this.db.query<ProjectUploadRow>('SELECT * FROM project_uploads WHERE time_completed IS NULL AND time_created < $1 ORDER BY time_created LIMIT 1000', [before]);
    return rows.map(fromRow);
  }

  /** Sets the room an unfinished upload takes; a finished or deleted one is left alone. */
  async setRoom(id: string, bytes: number): Promise<void> {
    await this.db.execute('UPDATE project_uploads SET room_bytes = $2 WHERE id = $1 AND time_completed IS NULL', [id, bytes]);
  }

  async delete(id: string): Promise<void> {
    await this.db.execute('DELETE FROM project_uploads WHERE id = $1', [id]);
  }
}
