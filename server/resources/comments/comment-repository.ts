/**
 * Comments on file boxes, and their reactions (migration 5). A comment goes
 * with its file, and a reply with its parent, by ON DELETE CASCADE; so the
 * box deletions (boxes-service.ts, the upload sweep) need no step of ours.
 */
import type { Db, SqlValue } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

export type AuthorKind = 'member' | 'listener';

export interface CommentAuthor {
  /** `member`: a project member, shown under their account's current name; `listener`: shown under `name`, as posted. */
  kind: AuthorKind;
  /** The account that wrote it; null for a listener without one. */
  userId: string | null;
  /** The player session it was written from, if any: what a listener's comments are theirs by. */
  sessionId: string | null;
  /**
   * Read: a listener's name as posted, or a member's current display name
   * (null while they have none). Written: a listener's name; ignored for
   * members, whose name is read from their account at each listing.
   */
  name: string | null;
}

export interface CommentRecord {
  id: string;
  fileId: string;
  /** The top-level comment this one replies to; null on top-level comments. */
  parentId: string | null;
  message: string;
  audioTimestamp: number | null;
  audioTimestampEnd: number | null;
  completed: boolean;
  pinned: boolean;
  author: CommentAuthor;
  /** The player it was written through; null through the API (or its player deleted). A listener's comment shows on this player only. */
  playerId: string | null;
  timeCreated: number;
  timeModified: number;
}

/**
 * Where comments are read: on a player (a listener's comments of that
 * player only, members' everywhere, and a reply only where its parent
 * shows), or undefined for every comment (members, through the API).
 */
export type CommentScope = { playerId: string } | undefined;

/** The fields an update may change; absent ones stay as they are. */
export type CommentChanges = Partial<Pick<CommentRecord, 'message' | 'completed' | 'pinned'>>;

/** Reactions of one comment by emoji, in the order each emoji was first used. */
export type Reactions = Record<string, { count: number; mine: boolean }>;

type CommentRow = {
  id: string;
  file_id: string;
  parent_id: string | null;
  message: string;
  audio_timestamp: number | null;
  audio_timestamp_end: number | null;
  completed: number;
  pinned: number;
  author_kind: string;
  author_user_id: string | null;
  author_session_id: string | null;
  author_name: string | null;
  player_id: string | null;
  /** The author's account name, joined. */
  user_name: string | null;
  time_created: number;
  time_modified: number;
};

const fromRow = (row: CommentRow): CommentRecord => {
  const kind = row.author_kind as AuthorKind;
  return {
    id: row.id,
    fileId: row.file_id,
    parentId: row.parent_id,
    message: row.message,
    audioTimestamp: row.audio_timestamp,
    audioTimestampEnd: row.audio_timestamp_end,
    completed: row.completed === 1,
    pinned: row.pinned === 1,
    author: { kind, userId: row.author_user_id, sessionId: row.author_session_id, name: kind === 'member' ? row.user_name : row.author_name },
    playerId: row.player_id,
    timeCreated: row.time_created,
    timeModified: row.time_modified,
  };
};

const select = `SELECT comments.*, users.name AS user_name FROM comments LEFT JOIN users ON users.id = comments.author_user_id`;

/**
 * The condition a comment shows under on the player bound to `$param`: a
 * member's anywhere, a listener's on its own player; a reply, besides, only
 * where its parent shows.
 */
const shownOnPlayer = (param: string) => `(comments.author_kind = 'member' OR comments.player_id = ${param})
  AND (comments.parent_id IS NULL OR EXISTS (
    SELECT 1 FROM comments parent WHERE parent.id = comments.parent_id AND (parent.author_kind = 'member' OR parent.player_id = ${param})))`;

/** Which comments a list across files keeps: not `completed`, `completed`, or all. */
export type CommentStatus = 'open' | 'done' | 'all';

/** The track and version a comment is on, for a list across files (the API's CommentTrack). */
export interface TrackRecord {
  fileId: string;
  fileName: string;
  /** The stack holding the file; null when its parent is a folder or the project. */
  stackId: string | null;
  stackName: string | null;
  versionName: string | null;
  projectId: string;
  projectName: string;
}

export interface CommentOnTrack extends CommentRecord {
  track: TrackRecord;
}

type CommentOnTrackRow = CommentRow & {
  file_name: string;
  version_name: string | null;
  stack_id: string | null;
  stack_name: string | null;
  project_id: string;
  project_name: string;
};

/** `$first, $first+1, …` for a list of `count` values bound from parameter `first` on. */
const placeholders = (first: number, count: number) => Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ');

const statusCondition: Record<CommentStatus, string> = {
  open: ' AND comments.completed = 0',
  done: ' AND comments.completed = 1',
  all: '',
};

/**
 * The comments on the files of these projects (bound from `$first` on) that
 * are not in the trash: a file in the trash, by itself or with its folder or
 * stack, has its own `trashed` set (BoxRepository.setTrashed).
 */
const inProjects = (first: number, count: number, joins = '') => `FROM comments
  JOIN boxes f ON f.id = comments.file_id AND f.trashed = 0
  JOIN projects p ON p.id = f.project_id${joins}
  WHERE f.project_id IN (${placeholders(first, count)})`;

/** A new comment id (`cmt_…`). */
export const newCommentId = () => newId('cmt');

export class CommentRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(comment: CommentRecord): Promise<void> {
    const { author } = comment;
    await this.db.execute(
      `INSERT INTO comments (id, file_id, parent_id, message, audio_timestamp, audio_timestamp_end, completed, pinned,
         author_kind, author_user_id, author_session_id, author_name, time_created, time_modified, player_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        comment.id, comment.fileId, comment.parentId, comment.message, comment.audioTimestamp, comment.audioTimestampEnd,
        comment.completed ? 1 : 0, comment.pinned ? 1 : 0, author.kind, author.userId, author.sessionId,
        author.kind === 'listener' ? author.name : null, comment.timeCreated, comment.timeModified, comment.playerId,
      ],
    );
  }

  /** One comment of the file, as `scope` shows it; undefined when the file has no such comment there. */
  async get(fileId: string, id: string, scope?: CommentScope): Promise<CommentRecord | undefined> {
    const [row] = scope
      ? await this.db.query<CommentRow>(`${select} WHERE comments.id = $1 AND comments.file_id = $2 AND ${shownOnPlayer('$3')}`, [id, fileId, scope.playerId])
      : await this.db.query<CommentRow>(`${select} WHERE comments.id = $1 AND comments.file_id = $2`, [id, fileId]);
    return row && fromRow(row);
  }

  /** Every comment of the file that `scope` shows, replies included, oldest first. */
  async list(fileId: string, scope?: CommentScope): Promise<CommentRecord[]> {
    const rows = scope
      ? await this.db.query<CommentRow>(`${select} WHERE comments.file_id = $1 AND ${shownOnPlayer('$2')} ORDER BY comments.time_created, comments.id`, [fileId, scope.playerId])
      : await this.db.query<CommentRow>(`${select} WHERE comments.file_id = $1 ORDER BY comments.time_created, comments.id`, [fileId]);
    return rows.map(fromRow);
  }

  /**
   * The comments on the files of these projects, replies included, with
   * the track each is on (its file, the stack holding it, the project);
   * newest first. Files in the trash are left out.
   */
  async listInProjects(projectIds: readonly string[], status: CommentStatus): Promise<CommentOnTrack[]> {
    if (projectIds.length === 0) return [];
    const rows = await this.db.query<CommentOnTrackRow>(
      `SELECT comments.*, users.name AS user_name, f.name AS file_name, f.version_name, s.id AS stack_id, s.name AS stack_name,
         p.id AS project_id, p.name AS project_name
       ${inProjects(1, projectIds.length, ` LEFT JOIN boxes s ON s.id = f.parent_id AND s.kind = 'stack' LEFT JOIN users ON users.id = comments.author_user_id`)}${statusCondition[status]}
       ORDER BY comments.time_created DESC, comments.id`,
      [...projectIds],
    );
    return rows.map((row) => ({
      ...fromRow(row),
      track: {
        fileId: row.file_id,
        fileName: row.file_name,
        stackId: row.stack_id,
        stackName: row.stack_name,
        versionName: row.version_name,
        projectId: row.project_id,
        projectName: row.project_name,
      },
    }));
  }

  /** How many comments on these projects' files (not in the trash) are open and not written by the account `notBy`. */
  async countOpenInProjects(projectIds: readonly string[], notBy: string): Promise<number> {
    if (projectIds.length === 0) return 0;
    const [row] = await this.db.query<{ count: number | string }>(
      `SELECT COUNT(*) AS count ${inProjects(2, projectIds.length)} AND comments.completed = 0
         AND (comments.author_user_id IS NULL OR comments.author_user_id <> $1)`,
      [notBy, ...projectIds],
    );
    return Number(row?.count ?? 0);
  }

  /** Changes the fields given in one statement, and timeModified with them; answers false when there is no such comment. */
  async update(fileId: string, id: string, changes: CommentChanges, now: number): Promise<boolean> {
    const sets: string[] = [];
    const params: SqlValue[] = [id, fileId, now];
    const set = (column: string, value: SqlValue) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.message !== undefined) set('message', changes.message);
    if (changes.completed !== undefined) set('completed', changes.completed ? 1 : 0);
    if (changes.pinned !== undefined) set('pinned', changes.pinned ? 1 : 0);
    if (sets.length === 0) return (await this.get(fileId, id)) !== undefined;
    return (await this.db.execute(`UPDATE comments SET ${sets.join(', ')}, time_modified = $3 WHERE id = $1 AND file_id = $2`, params)) === 1;
  }

  /** Deletes the comment, its replies and all their reactions; answers false when there is no such comment. */
  async delete(fileId: string, id: string): Promise<boolean> {
    return (await this.db.execute('DELETE FROM comments WHERE id = $1 AND file_id = $2', [id, fileId])) === 1;
  }

  /** Adds the reactor's reaction; a second one with the same emoji changes nothing. */
  async react(commentId: string, emoji: string, reactor: string, now: number): Promise<void> {
    await this.db.execute(
      'INSERT INTO comment_reactions (comment_id, emoji, reactor, time_created) VALUES ($1, $2, $3, $4) ON CONFLICT (comment_id, emoji, reactor) DO NOTHING',
      [commentId, emoji, reactor, now],
    );
  }

  async unreact(commentId: string, emoji: string, reactor: string): Promise<void> {
    await this.db.execute('DELETE FROM comment_reactions WHERE comment_id = $1 AND emoji = $2 AND reactor = $3', [commentId, emoji, reactor]);
  }

  /**
   * The reactions of the file's comments (or of one comment), by comment id,
   * with `mine` for `reactor` (null: nobody's, for a caller with no
   * identity to react as).
   */
  async reactions(fileId: string, reactor: string | null, commentId?: string): Promise<Map<string, Reactions>> {
    const rows = await this.db.query<ReactionRow>(
      `SELECT r.comment_id, r.emoji, COUNT(*) AS count, SUM(CASE WHEN r.reactor = $2 THEN 1 ELSE 0 END) AS mine, MIN(r.time_created) AS first
       FROM comment_reactions r JOIN comments c ON c.id = r.comment_id
       WHERE c.file_id = $1 AND ($3 = '' OR c.id = $3)
       GROUP BY r.comment_id, r.emoji
       ORDER BY first, r.emoji`,
      [fileId, reactor ?? '', commentId ?? ''],
    );
    return byComment(rows);
  }

  /** The reactions of the comments of `listInProjects`, by comment id, with `mine` for `reactor`. */
  async reactionsInProjects(projectIds: readonly string[], reactor: string | null): Promise<Map<string, Reactions>> {
    if (projectIds.length === 0) return new Map();
    const rows = await this.db.query<ReactionRow>(
      `SELECT r.comment_id, r.emoji, COUNT(*) AS count, SUM(CASE WHEN r.reactor = $1 THEN 1 ELSE 0 END) AS mine, MIN(r.time_created) AS first
       FROM comment_reactions r JOIN comments c ON c.id = r.comment_id JOIN boxes f ON f.id = c.file_id AND f.trashed = 0
       WHERE f.project_id IN (${placeholders(2, projectIds.length)})
       GROUP BY r.comment_id, r.emoji
       ORDER BY first, r.emoji`,
      [reactor ?? '', ...projectIds],
    );
    return byComment(rows);
  }
}

type ReactionRow = { comment_id: string; emoji: string; count: number | string; mine: number | string; first: number };

/** Reaction rows (in the order each emoji was first used) gathered by comment. */
function byComment(rows: ReactionRow[]): Map<string, Reactions> {
  const gathered = new Map<string, Reactions>();
  for (const row of rows) {
    const reactions = gathered.get(row.comment_id) ?? {};
    reactions[row.emoji] = { count: Number(row.count), mine: Number(row.mine) > 0 };
    gathered.set(row.comment_id, reactions);
  }
  return gathered;
}
