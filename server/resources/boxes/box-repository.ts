import { byCodeUnit, type Db, type SqlValue } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { forUpdate } from '../projects/project-repository.ts';

export type BoxKind = 'file' | 'folder' | 'stack';
export type FileStatus = 'awaiting-upload' | 'pending' | 'processing' | 'ready' | 'failed';

export interface BoxRecord {
  id: string;
  projectId: string;
  kind: BoxKind;
  name: string;
  color: string;
  /** The folder or stack holding the box; null at the top level of the project. */
  parentId: string | null;
  /** Order among the parent's children. */
  position: number;
  trashed: boolean;
  hidden: boolean;
  versionName: string | null;
  /** Files only. */
  status: FileStatus | null;
  statusReason: string | null;
  size: number | null;
  mimeType: string | null;
  duration: number | null;
  /** Audio files, once analysed. */
  audio: Schemas['AudioAnalysis'] | null;
  uploaderId: string | null;
  /** A file sent through a player's upload portal: the name its uploader typed (they have no account). */
  uploaderName?: string | null;
  /** …and the email they gave, if any. */
  uploaderEmail?: string | null;
  /**
   * A folder where an upload portal holds what strangers send (migration
   * 12): no player shows anything inside it, until a member moves it out.
   */
  held?: boolean;
  /**
   * Changes with every change to what the box's JSON shows, its ETag: its
   * own fields, its processing state, and, for a folder or stack, its list
   * of children (a child added, removed, moved, renamed or given a version
   * name).
   */
  version: number;
  timeCreated: number;
  timeModified: number;
}

type BoxRow = {
  id: string;
  project_id: string;
  kind: string;
  name: string;
  color: string;
  parent_id: string | null;
  position: number;
  trashed: number;
  hidden: number;
  version_name: string | null;
  status: string | null;
  status_reason: string | null;
  size: number | null;
  mime_type: string | null;
  duration: number | null;
  audio: string | null;
  uploader_id: string | null;
  /** Migration 9. */
  uploader_name?: string | null;
  uploader_email?: string | null;
  /** Migration 14. */
  held?: number;
  version: number;
  time_created: number;
  time_modified: number;
};

const fromRow = (row: BoxRow): BoxRecord => ({
  id: row.id,
  projectId: row.project_id,
  kind: row.kind as BoxKind,
  name: row.name,
  color: row.color,
  parentId: row.parent_id,
  position: row.position,
  trashed: row.trashed === 1,
  hidden: row.hidden === 1,
  versionName: row.version_name,
  status: row.status as FileStatus | null,
  statusReason: row.status_reason,
  size: row.size,
  mimeType: row.mime_type,
  duration: row.duration,
  audio: row.audio ? JSON.parse(row.audio) : null,
  uploaderId: row.uploader_id,
  uploaderName: row.uploader_name ?? null,
  uploaderEmail: row.uploader_email ?? null,
  held: Number(row.held ?? 0) === 1,
  version: row.version,
  timeCreated: row.time_created,
  timeModified: row.time_modified,
});

const columns = [
  'id', 'project_id', 'kind', 'name', 'color', 'parent_id', 'position', 'trashed', 'hidden', 'version_name',
  'status', 'status_reason', 'size', 'mime_type', 'duration', 'audio', 'uploader_id', 'uploader_name', 'uploader_email', 'held', 'time_created', 'time_modified',
] as const;

const toRow = (box: BoxRecord): SqlValue[] => [
  box.id, box.projectId, box.kind, box.name, box.color, box.parentId, box.position, box.trashed ? 1 : 0, box.hidden ? 1 : 0,
  box.versionName, box.status, box.statusReason, box.size, box.mimeType, box.duration, box.audio && JSON.stringify(box.audio),
  box.uploaderId, box.uploaderName ?? null, box.uploaderEmail ?? null, box.held ? 1 : 0, box.timeCreated, box.timeModified,
];

/**
 * Rows per multi-row INSERT of insertMany: 500 boxes of 23 values each stay
 * under SQLite's limit of 32,766 parameters (SQLITE_MAX_VARIABLE_NUMBER)
 * and PostgreSQL's of 65,535.
 */
const INSERT_BATCH_ROWS = 500;

/** The kinds in the order of List all files, by their rank in its sort key (boxes-service.ts listOrder). */
const KINDS_IN_LIST_ORDER: BoxKind[] = ['folder', 'stack', 'file'];

/** Where a page of List all files starts: after the box of this sort key (boxes-service.ts listOrder: kind's rank, creation time, id). */
export interface BoxPageKey {
  rank: number;
  timeCreated: number;
  id: string;
}

const kindOrder = `CASE kind WHEN 'folder' THEN 0 WHEN 'stack' THEN 1 ELSE 2 END`;

/** What the JSON of a folder or stack shows of a child (boxes-service.ts boxJson), and where the child is. */
export type ChildLabel = Pick<BoxRecord, 'id' | 'parentId' | 'name' | 'versionName' | 'position'>;

/** The children of the folders and stacks `parentIds` of the project, as ChildLabels, in no order. */
async function childLabels(db: Db, projectId: string, parentIds: string[]): Promise<ChildLabel[]> {
  if (parentIds.length === 0) return [];
  // Padded to a power of two (repeating the last id), so that pages of any size share a few prepared statements.
  const padded = [...parentIds];
  while (padded.length & (padded.length - 1)) padded.push(parentIds[parentIds.length - 1]);
  // Found through boxes_parent. The project is checked here, not in the WHERE, where SQLite would take an index on
  // project_id instead and read every box of the project.
  const rows = await db.query<{ id: string; project_id: string; parent_id: string; name: string; version_name: string | null; position: number }>(
    `SELECT id, project_id, parent_id, name, version_name, position FROM boxes WHERE parent_id IN (${padded.map((_, i) => `$${i + 1}`).join(', ')})`,
    padded,
  );
  return rows
    .filter((row) => row.project_id === projectId)
    .map((row) => ({ id: row.id, parentId: row.parent_id, name: row.name, versionName: row.version_name, position: Number(row.position) }));
}

/**
 * Every write goes through this repository, and each one bumps the
 * project's box_version, which keys the cache of box listings
 * (box-list-cache.ts), and the version of every box whose JSON it changes,
 * which keys each box's JSON in those listings (box-listing.ts). A write
 * that forgot either would serve stale listings.
 *
 * Each write runs in a transaction (the caller's, when there is one) and
 * bumps box_version first. So the project's row is the first lock every box
 * write takes, and two transactions writing boxes of one project queue on
 * it instead of deadlocking on each other's boxes; and a listing can never
 * be cached under the new box_version with the boxes as they were.
 */
export class BoxRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  private async bumpVersion(db: Db, projectId: string): Promise<void> {
    await db.execute('UPDATE projects SET box_version = box_version + 1 WHERE id = $1', [projectId]);
  }

  /**
   * Locks the project's boxes until the end of the transaction: every box
   * write of the project waits for it, since each takes the project's row
   * first. A read-modify-write of boxes (updateBox, moves, new positions)
   * takes it before it reads. On SQLite the transaction is already
   * exclusive. Call it inside a transaction; answers false when there is no
   * such project.
   */
  async lockProject(projectId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT id FROM projects WHERE id = $1${forUpdate(this.db)}`, [projectId]);
    return rows.length === 1;
  }

  /** Inserts a new box, at version 1. Its parent's list of children changes, and so does the parent's version. */
  async insert(box: BoxRecord): Promise<void> {
    await this.db.transaction(async (db) => {
      await this.bumpVersion(db, box.projectId);
      await db.execute(
        `INSERT INTO boxes (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        toRow(box),
      );
      if (box.parentId) await db.execute('UPDATE boxes SET version = version + 1 WHERE id = $1', [box.parentId]);
    });
  }

  /**
   * Inserts many new boxes at once, in one transaction of multi-row
   * INSERTs: the large projects of the bench and the tests
   * (server/testing/), which `insert` would make a statement or three per
   * box. The rows are the ones `insert` would leave, box after box in the
   * order given (a parent before its children): each box at version 1 plus
   * one per child inserted after it, a parent already in the project one up
   * per new child, and the project's box_version bumped (once).
   */
  async insertMany(boxes: BoxRecord[]): Promise<void> {
    if (boxes.length === 0) return;
    const newChildren = new Map<string, number>();
    for (const box of boxes) if (box.parentId) newChildren.set(box.parentId, (newChildren.get(box.parentId) ?? 0) + 1);
    const inBatch = new Set(boxes.map((box) => box.id));
    const batchColumns = [...columns, 'version'];
    await this.db.transaction(async (db) => {
      for (const projectId of new Set(boxes.map((box) => box.projectId))) await this.bumpVersion(db, projectId);
      for (let start = 0; start < boxes.length; start += INSERT_BATCH_ROWS) {
        const chunk = boxes.slice(start, start + INSERT_BATCH_ROWS);
        const values = chunk.map((_, row) => `(${batchColumns.map((_, column) => `$${row * batchColumns.length + column + 1}`).join(', ')})`);
        await db.execute(
          `INSERT INTO boxes (${batchColumns.join(', ')}) VALUES ${values.join(', ')}`,
          chunk.flatMap((box) => [...toRow(box), 1 + (newChildren.get(box.id) ?? 0)]),
        );
      }
      for (const [parentId, count] of newChildren) {
        if (!inBatch.has(parentId)) await db.execute('UPDATE boxes SET version = version + $2 WHERE id = $1', [parentId, count]);
      }
    });
  }

  /**
   * Writes back the fields people change: name, colour, place, trash,
   * hidden, version name; and bumps the box's version, and those of its old
   * and new parents, whose lists of children show it. A file's processing
   * state is not among them; it changes only through setProcessing, so a
   * rename that races the audio worker cannot undo the worker's result, nor
   * the worker the rename. The record must have been read after
   * lockProject in the same transaction.
   */
  async save(box: BoxRecord): Promise<void> {
    await this.db.transaction(async (db) => {
      await this.bumpVersion(db, box.projectId);
      await db.execute('UPDATE boxes SET version = version + 1 WHERE id IN (SELECT parent_id FROM boxes WHERE id = $1) OR id = $2', [box.id, box.parentId]);
      await db.execute(
        `UPDATE boxes SET name = $2, color = $3, parent_id = $4, position = $5, trashed = $6, hidden = $7, version_name = $8, time_modified = $9,
           version = version + 1
         WHERE id = $1`,
        [box.id, box.name, box.color, box.parentId, box.position, box.trashed ? 1 : 0, box.hidden ? 1 : 0, box.versionName, box.timeModified],
      );
    });
  }

  /** A box of the project; undefined for an unknown id or a box of another project. */
  async get(projectId: string, id: string): Promise<BoxRecord | undefined> {
    const [row] = await this.db.query<BoxRow>('SELECT * FROM boxes WHERE id = $1 AND project_id = $2', [id, projectId]);
    return row && fromRow(row);
  }

  /** A file box by id alone, for the signed download URL, which names no project. */
  async findFile(id: string): Promise<BoxRecord | undefined> {
    const [row] = await this.db.query<BoxRow>(`SELECT * FROM boxes WHERE id = $1 AND kind = 'file'`, [id]);
    return row && fromRow(row);
  }

  async getMany(projectId: string, ids: string[]): Promise<BoxRecord[]> {
    const all = await Promise.all(ids.map((id) => this.get(projectId, id)));
    return all.filter((box): box is BoxRecord => box !== undefined);
  }

  /** Every box of the project: folders, then stacks, then files; oldest first within each kind. */
  async listProject(projectId: string, kind?: BoxKind): Promise<BoxRecord[]> {
    const rows = await this.db.query<BoxRow>(
      `SELECT * FROM boxes WHERE project_id = $1 AND ($2 = '' OR kind = $2) ORDER BY ${kindOrder}, time_created, id`,
      [projectId, kind ?? ''],
    );
    return rows.map(fromRow);
  }

  /**
   * The id and version of every box of the project, in the order of
   * listProject: what List all files reads to find the boxes whose JSON it
   * holds at their version already (box-listing.ts).
   */
  async listVersions(projectId: string): Promise<Array<{ id: string; version: number }>> {
    return this.db.query<{ id: string; version: number }>(`SELECT id, version FROM boxes WHERE project_id = $1 ORDER BY ${kindOrder}, time_created, id`, [projectId]);
  }

  async children(parentId: string): Promise<BoxRecord[]> {
    return (await this.db.query<BoxRow>('SELECT * FROM boxes WHERE parent_id = $1 ORDER BY position, id', [parentId])).map(fromRow);
  }

  /** The children of a folder or stack, or with null the boxes at the top level of the project, in their order. */
  async childrenIn(projectId: string, parentId: string | null): Promise<BoxRecord[]> {
    const rows = await this.db.query<BoxRow>('SELECT * FROM boxes WHERE project_id = $1 AND parent_id IS NOT DISTINCT FROM $2 ORDER BY position, id', [projectId, parentId]);
    return rows.map(fromRow);
  }

  /** The position after the last child of a parent (or of the project's top level). */
  async nextPosition(projectId: string, parentId: string | null): Promise<number> {
    const [row] = await this.db.query<{ next: number }>(
      'SELECT COALESCE(MAX(position), -1) + 1 AS next FROM boxes WHERE project_id = $1 AND parent_id IS NOT DISTINCT FROM $2',
      [projectId, parentId],
    );
    return Number(row.next);
  }

  /**
   * A page of List all files (the boxes that are not hidden; folders, then
   * stacks, then files; oldest first within each kind, then by id): at most
   * `count` boxes after `after`, the sort key of the box before them (from
   * the start without one), with what their JSON shows of the children of
   * those that are folders or stacks. Read kind after kind from boxes_page
   * (migration 28), each query a range of the index from the key on, so a
   * page costs the same wherever it starts and however large the project
   * is; and the children through boxes_parent.
   *
   * The whole listing is one statement, so it shows one state of the
   * project; this takes several, so they run in one transaction that sees
   * one state too: on SQLite the connection's (no write lands in between),
   * on PostgreSQL a REPEATABLE READ one, whose statements all read the
   * snapshot of its first (a read-only transaction at that level never
   * fails to serialize). A box moved meanwhile is on the page with its
   * parent's children as they were with it.
   */
  async listVisiblePage(projectId: string, after: BoxPageKey | undefined, count: number): Promise<{ boxes: BoxRecord[]; children: ChildLabel[] }> {
    return this.db.transaction(async (db) => {
      if (db.dialect === 'postgres') await db.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const boxes: BoxRecord[] = [];
      for (const [rank, kind] of KINDS_IN_LIST_ORDER.entries()) {
        if (boxes.length >= count) break;
        if (after && rank < after.rank) continue;
        const within = after && rank === after.rank;
        // The id breaks ties of time_created, compared by code unit as the cursor's keys are (see byCodeUnit).
        const id = `id${byCodeUnit(db)}`;
        const rows = await db.query<BoxRow>(
          `SELECT * FROM boxes WHERE project_id = $1 AND hidden = 0 AND kind = $2${within ? ` AND time_created >= $4 AND (time_created > $4 OR ${id} > $5)` : ''}
           ORDER BY time_created, ${id} LIMIT $3`,
          within ? [projectId, kind, count - boxes.length, after.timeCreated, after.id] : [projectId, kind, count - boxes.length],
        );
        for (const row of rows) boxes.push(fromRow(row));
      }
      return { boxes, children: await childLabels(db, projectId, boxes.filter((box) => box.kind !== 'file').map((box) => box.id)) };
    });
  }

  /**
   * Sets only a file's processing state (and, when done, its analysis),
   * leaving every other field as it is now: the audio worker runs alongside
   * requests that rename, move or trash the same file.
   */
  async setProcessing(
    projectId: string,
    boxId: string,
    state: { status: FileStatus; statusReason?: string | null; duration?: number | null; audio?: BoxRecord['audio'] },
    now: number,
  ): Promise<void> {
    const keep = state.duration === undefined;
    await this.db.transaction(async (db) => {
      await this.bumpVersion(db, projectId);
      await db.execute(
        `UPDATE boxes SET status = $3, status_reason = $4, duration = CASE WHEN $5 = 1 THEN duration ELSE $6 END,
           audio = CASE WHEN $5 = 1 THEN audio ELSE $7 END, time_modified = $8, version = version + 1
         WHERE id = $1 AND project_id = $2 AND kind = 'file'`,
        [boxId, projectId, state.status, state.statusReason ?? null, keep ? 1 : 0, state.duration ?? null, state.audio ? JSON.stringify(state.audio) : null, now],
      );
    });
  }

  /** The box and everything inside it, at any depth. */
  async subtreeIds(id: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `WITH RECURSIVE subtree(id) AS (
         SELECT id FROM boxes WHERE id = $1
         UNION ALL
         SELECT boxes.id FROM boxes JOIN subtree ON boxes.parent_id = subtree.id
       ) SELECT id FROM subtree`,
      [id],
    );
    return rows.map((row) => row.id);
  }

  /** The chain of parents above a box, nearest first. */
  async ancestorIds(id: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string; depth: number }>(
      `WITH RECURSIVE up(id, depth) AS (
         SELECT parent_id, 1 FROM boxes WHERE id = $1 AND parent_id IS NOT NULL
         UNION ALL
         SELECT boxes.parent_id, up.depth + 1 FROM boxes JOIN up ON boxes.id = up.id WHERE boxes.parent_id IS NOT NULL
       ) SELECT id, depth FROM up ORDER BY depth`,
      [id],
    );
    return rows.map((row) => row.id);
  }

  async setTrashed(projectId: string, ids: string[], trashed: boolean, now: number): Promise<void> {
    await this.db.transaction(async (db) => {
      await this.bumpVersion(db, projectId);
      for (const id of ids) {
        await db.execute('UPDATE boxes SET trashed = $2, time_modified = $3, version = version + 1 WHERE id = $1 AND project_id = $4', [id, trashed ? 1 : 0, now, projectId]);
      }
    });
  }

  /**
   * Deletes a box; its parent's list of children changes, and so does the
   * parent's version. Children it still had are left at the top level by the
   * foreign key (ON DELETE SET NULL), which changes their parentid: their
   * versions change too.
   */
  async delete(projectId: string, id: string): Promise<void> {
    await this.db.transaction(async (db) => {
      await this.bumpVersion(db, projectId);
      await db.execute('UPDATE boxes SET version = version + 1 WHERE id IN (SELECT parent_id FROM boxes WHERE id = $1 AND project_id = $2) OR parent_id = $1', [id, projectId]);
      await db.execute('DELETE FROM boxes WHERE id = $1 AND project_id = $2', [id, projectId]);
    });
  }
}
