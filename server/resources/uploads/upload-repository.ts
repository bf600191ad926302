import type { Db } from '../../store/db.ts';

export type UploadKind = 'file' | 'artwork';

export interface UploadRecord {
  id: string;
  kind: UploadKind;
  projectId: string;
  /** Who asked for the upload URL. */
  userId: string;
  /** The file box, or the artwork asset, the bytes belong to. */
  objectId: string;
  name: string;
  contentType: string;
  size: number;
  /** The x-storage-meta-* header values, by key. */
  metadata: Record<string, string>;
  expires: number;
  timeCreated: number;
  timeStarted: number | null;
  timeCompleted: number | null;
}

type UploadRow = {
  id: string;
  kind: string;
  project_id: string;
  user_id: string;
  object_id: string;
  name: string;
  content_type: string;
  size: number;
  metadata: string;
  expires: number;
  time_created: number;
  time_started: number | null;
  time_completed: number | null;
};

export class UploadRepository {
  constructor(private db: Db) {}

  async insert(upload: UploadRecord): Promise<void> {
    await this.db.execute(
      `INSERT INTO uploads (id, kind, project_id, user_id, object_id, name, content_type, size, metadata, expires, time_created)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [upload.id, upload.kind, upload.projectId, upload.userId, upload.objectId, upload.name, upload.contentType, upload.size, JSON.stringify(upload.metadata), upload.expires, upload.timeCreated],
    );
  }

  async get(id: string): Promise<UploadRecord | undefined> {
    const [row] = await this.db.query<UploadRow>('SELECT * FROM uploads WHERE id = $1', [id]);
    return (
      row && {
        id: row.id,
        kind: row.kind as UploadKind,
        projectId: row.project_id,
        userId: row.user_id,
        objectId: row.object_id,
        name: row.name,
        contentType: row.content_type,
        size: row.size,
        metadata: JSON.parse(row.metadata),
        expires: row.expires,
        timeCreated: row.time_created,
        timeStarted: row.time_started,
        timeCompleted: row.time_completed,
      }
    );
  }

  /**
   * Claims the upload for one PUT. Answers false when another PUT holds it or
   * it has completed: an upload URL works once.
   */
  async claim(id: string, now: number): Promise<boolean> {
    return (await this.db.execute('UPDATE uploads SET time_started = $2 WHERE id = $1 AND time_started IS NULL AND time_completed IS NULL', [id, now])) === 1;
  }

  /** Gives a claim back after a failed PUT, so that the URL can be used again. */
  async release(id: string): Promise<void> {
    await this.db.execute('UPDATE uploads SET time_started = NULL WHERE id = $1 AND time_completed IS NULL', [id]);
  }

  async complete(id: string, now: number): Promise<void> {
    await this.db.execute('UPDATE uploads SET time_completed = $2 WHERE id = $1', [id, now]);
  }

  /** File uploads whose URL expired before any PUT began or completed. */
  async listAbandonedFiles(now: number): Promise<Array<{ id: string; projectId: string; boxId: string }>> {
    const rows = await this.db.query<{ id: string; project_id: string; object_id: string }>(
      `SELECT id, project_id, object_id FROM uploads WHERE kind = 'file' AND expires < $1 AND time_completed IS NULL AND time_started IS NULL`,
      [now],
    );
    return rows.map((row) => ({ id: row.id, projectId: row.project_id, boxId: row.object_id }));
  }

  async delete(id: string): Promise<void> {
    await this.db.execute('DELETE FROM uploads WHERE id = $1', [id]);
  }
}
