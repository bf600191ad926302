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
  /** When the PUT that holds the claim took it; null when nobody holds one. */
  timeStarted: number | null;
  timeCompleted: number | null;
  /** The token of the PUT (or sweep) holding the upload; null when nobody does. */
  claimToken: string | null;
  /** When that claim goes stale unless renewed. */
  claimExpires: number | null;
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
  claim_token: string | null;
  claim_expires: number | null;
};

const fromRow = (row: UploadRow): UploadRecord => ({
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
  claimToken: row.claim_token,
  claimExpires: row.claim_expires,
});

/** SQL: nobody holds the upload at `now` (a parameter): no claim, or one whose deadline passed (its holder died or stalled). */
const nobodyHolds = (now: string) => `(claim_token IS NULL OR claim_expires < ${now})`;

/**
 * Uploads and the claims on them. A PUT claims its upload with a random
 * token and a deadline, renews the deadline while its bytes flow, and
 * completes or releases it naming the token, so that only the holder can:
 * a PUT whose claim went stale and was taken over can no longer change the
 * upload. Completed uploads cannot be claimed again: an upload URL works once.
 */
export class UploadRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * The bytes an account keeps, for its storage quota: the declared sizes of
   * the files of every project it owns (those still awaiting their upload
   * too, so that an upload URL reserves its room), of their artwork, and of
   * artwork uploads not completed yet. A file a stranger is sending through
   * an upload portal, or a member through a resumable upload, counts only the
   * room its upload takes (the bytes it has), not the size it declared,
   * until it is complete: a declaration reserves nothing in the owner's
   * account. Renditions and peaks the server
   * makes are not counted.
   */
  async bytesOwnedBy(userId: string): Promise<number> {
    const [row] = await this.db.query<{ used: number | string | null }>(
      `SELECT
         (SELECT COALESCE(SUM(b.size), 0) FROM boxes b JOIN projects p ON p.id = b.project_id WHERE p.owner_id = $1 AND b.kind = 'file')
       + (SELECT COALESCE(SUM(a.size), 0) FROM artworks a JOIN projects p ON p.id = a.project_id WHERE p.owner_id = $1)
       + (SELECT COALESCE(SUM(u.size), 0) FROM uploads u JOIN projects p ON p.id = u.project_id WHERE p.owner_id = $1 AND u.kind = 'artwork' AND u.time_completed IS NULL)
       - (SELECT COALESCE(SUM(b.size - u.room_bytes), 0) FROM portal_uploads u JOIN boxes b ON b.id = u.box_id JOIN projects p ON p.id = u.project_id
           WHERE p.owner_id = $1 AND b.kind = 'file' AND u.time_completed IS NULL)
       - (SELECT COALESCE(SUM(b.size - u.room_bytes), 0) FROM project_uploads u JOIN boxes b ON b.id = u.box_id JOIN projects p ON p.id = u.project_id
           WHERE p.owner_id = $1 AND b.kind = 'file' AND u.time_completed IS NULL) AS used`,
      [userId],
    );
    return Number(row?.used ?? 0);
  }

  async insert(upload: Omit<UploadRecord, 'timeStarted' | 'timeCompleted' | 'claimToken' | 'claimExpires'>): Promise<void> {
    await this.db.execute(
      `INSERT INTO uploads (id, kind, project_id, user_id, object_id, name, content_type, size, metadata, expires, time_created)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [upload.id, upload.kind, upload.projectId, upload.userId, upload.objectId, upload.name, upload.contentType, upload.size, JSON.stringify(upload.metadata), upload.expires, upload.timeCreated],
    );
  }

  async get(id: string): Promise<UploadRecord | undefined> {
    const [row] = await this.db.query<UploadRow>('SELECT * FROM uploads WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  /** The upload whose bytes go to this file box or artwork, if there is one. */
  async findByObject(objectId: string): Promise<UploadRecord | undefined> {
    const [row] = await this.db.query<UploadRow>('SELECT * FROM uploads WHERE object_id = $1', [objectId]);
    return row && fromRow(row);
  }

  /**
   * Claims the upload for `token` until `expires`, when nobody holds it or
   * its claim is stale (taking that over). Answers false when a live claim
   * holds it or it has completed.
   */
  async claim(id: string, token: string, now: number, expires: number): Promise<boolean> {
    const changed = await this.db.execute(
      `UPDATE uploads SET claim_token = $2, claim_expires = $3, time_started = $4
       WHERE id = $1 AND time_completed IS NULL AND ${nobodyHolds('$4')}`,
      [id, token, expires, now],
    );
    return changed === 1;
  }

  /** Moves the deadline of the claim `token` holds; answers false when it holds it no longer. */
  async renew(id: string, token: string, expires: number): Promise<boolean> {
    return (await this.db.execute('UPDATE uploads SET claim_expires = $3 WHERE id = $1 AND claim_token = $2 AND time_completed IS NULL', [id, token, expires])) === 1;
  }

  /** Gives the claim back after a failed PUT, so that the URL can be used again; does nothing unless `token` holds it. */
  async release(id: string, token: string): Promise<boolean> {
    return (
      (await this.db.execute('UPDATE uploads SET claim_token = NULL, claim_expires = NULL, time_started = NULL WHERE id = $1 AND claim_token = $2 AND time_completed IS NULL', [
        id,
        token,
      ])) === 1
    );
  }

  /** Marks the upload done, once and for good; answers false (changing nothing) unless `token` holds the claim. */
  async complete(id: string, token: string, now: number): Promise<boolean> {
    return (
      (await this.db.execute('UPDATE uploads SET time_completed = $3, claim_token = NULL, claim_expires = NULL WHERE id = $1 AND claim_token = $2 AND time_completed IS NULL', [
        id,
        token,
        now,
      ])) === 1
    );
  }

  /** Frees every claim whose deadline passed before `now`; answers how many. */
  async releaseStale(now: number): Promise<number> {
    return this.db.execute(
      'UPDATE uploads SET claim_token = NULL, claim_expires = NULL, time_started = NULL WHERE claim_token IS NOT NULL AND claim_expires < $1 AND time_completed IS NULL',
      [now],
    );
  }

  /** Uploads whose URL expired before they completed, and that no live claim holds: nothing can complete them any more. */
  async listAbandoned(now: number): Promise<UploadRecord[]> {
    const rows = await this.db.query<UploadRow>(`SELECT * FROM uploads WHERE expires < $1 AND time_completed IS NULL AND ${nobodyHolds('$1')}`, [now]);
    return rows.map(fromRow);
  }

  async delete(id: string): Promise<void> {
    await this.db.execute('DELETE FROM uploads WHERE id = $1', [id]);
  }
}
