/**
 * Notifications and each account's notification settings (migration 22).
 * The claims (`claimPending`) are single UPDATE … RETURNING statements, so
 * that two workers mailing the same account never take the same
 * notification: the database serialises the row updates, and the second
 * finds it no longer pending.
 */
import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';

export type NotificationKind = Schemas['NotificationKind'];
export type MailSetting = Schemas['NotificationMail'];
/** Where a notification's mail stands: waiting to be mailed, queued, or not to be mailed. */
export type MailState = 'pending' | 'sent' | 'none';

/** What a notification's mail says beyond its summary; all of it someone's text, escaped when the mail is made. */
export interface NotificationDetails {
  /** The file (track) it is about. */
  track: string | null;
  /** The project's name. */
  project: string;
  /** Who did it: a comment's author, a portal's uploader. */
  actor: string | null;
  /** A comment's words, or why an analysis failed. */
  text: string | null;
}

export interface NotificationRecord {
  id: string;
  userId: string;
  kind: NotificationKind;
  projectId: string;
  fileId: string | null;
  commentId: string | null;
  /** The account that caused it (a member's comment), whose deletion deletes it: its summary names them. */
  actorId: string | null;
  summary: string;
  link: string;
  details: NotificationDetails;
  mail: MailState;
  timeCreated: number;
  timeRead: number | null;
}

export interface NotificationSettingsRecord {
  mail: MailSetting;
  /** When the account's next digest is due, while one is scheduled. */
  digestAt: number | null;
}

type NotificationRow = {
  id: string;
  user_id: string;
  kind: string;
  project_id: string;
  file_id: string | null;
  comment_id: string | null;
  actor_id: string | null;
  summary: string;
  link: string;
  details: string;
  mail: string;
  time_created: number | string;
  time_read: number | string | null;
};

const fromRow = (row: NotificationRow): NotificationRecord => ({
  id: row.id,
  userId: row.user_id,
  kind: row.kind as NotificationKind,
  projectId: row.project_id,
  fileId: row.file_id,
  commentId: row.comment_id,
  actorId: row.actor_id,
  summary: row.summary,
  link: row.link,
  details: JSON.parse(row.details),
  mail: row.mail as MailState,
  timeCreated: Number(row.time_created),
  timeRead: row.time_read === null ? null : Number(row.time_read),
});

const COLUMNS = 'id, user_id, kind, project_id, file_id, comment_id, actor_id, summary, link, details, mail, time_created, time_read';

export class NotificationRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(notification: NotificationRecord): Promise<void> {
    await this.db.execute(`INSERT INTO notifications (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, [
      notification.id,
      notification.userId,
      notification.kind,
      notification.projectId,
      notification.fileId,
      notification.commentId,
      notification.actorId,
      notification.summary,
      notification.link,
      JSON.stringify(notification.details),
      notification.mail,
      notification.timeCreated,
      notification.timeRead,
    ]);
  }

  async get(id: string): Promise<NotificationRecord | undefined> {
    const [row] = await this.db.query<NotificationRow>(`SELECT ${COLUMNS} FROM notifications WHERE id = $1`, [id]);
    return row && fromRow(row);
  }

  /** The account's notifications, newest first; only the unread ones with `unread`. */
  async listOf(userId: string, options: { unread: boolean }): Promise<NotificationRecord[]> {
    const rows = await this.db.query<NotificationRow>(
      `SELECT ${COLUMNS} FROM notifications WHERE user_id = $1${options.unread ? ' AND time_read IS NULL' : ''} ORDER BY time_created DESC, id DESC`,
      [userId],
    );
    return rows.map(fromRow);
  }

  /** Marks the account's notifications of `ids` read (all of them without `ids`); ids not theirs change nothing. */
  async markRead(userId: string, ids: readonly string[] | undefined, now: number): Promise<void> {
    if (ids === undefined) {
      await this.db.execute('UPDATE notifications SET time_read = $2 WHERE user_id = $1 AND time_read IS NULL', [userId, now]);
      return;
    }
    if (ids.length === 0) return;
    const list = ids.map((_, i) => `$${i + 3}`).join(', ');
    await this.db.execute(`UPDATE notifications SET time_read = $2 WHERE user_id = $1 AND time_read IS NULL AND id IN (${list})`, [userId, now, ...ids]);
  }

  async countUnread(userId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM notifications WHERE user_id = $1 AND time_read IS NULL', [userId]);
    return Number(row.n);
  }

  /**
   * Takes the notifications waiting for their mail, setting them to `to`
   * ('sent' when a mail is queued for them, 'none' when none will be), and
   * answers them oldest first: the one of `id`, or every one of the account.
   */
  async claimPending(where: { id: string } | { userId: string }, to: 'sent' | 'none'): Promise<NotificationRecord[]> {
    const [column, value] = 'id' in where ? ['id', where.id] : ['user_id', where.userId];
    const rows = await this.db.query<NotificationRow>(`UPDATE notifications SET mail = $2 WHERE ${column} = $1 AND mail = 'pending' RETURNING ${COLUMNS}`, [value, to]);
    return rows.map(fromRow).sort((a, b) => a.timeCreated - b.timeCreated || (a.id < b.id ? -1 : 1));
  }

  /** The account's settings; undefined until it changes them (the defaults apply). */
  async settingsOf(userId: string): Promise<NotificationSettingsRecord | undefined> {
    const [row] = await this.db.query<{ mail: string; digest_at: number | string | null }>('SELECT mail, digest_at FROM notification_settings WHERE user_id = $1', [userId]);
    return row && { mail: row.mail as MailSetting, digestAt: row.digest_at === null ? null : Number(row.digest_at) };
  }

  async setMail(userId: string, mail: MailSetting): Promise<void> {
    await this.db.execute(
      'INSERT INTO notification_settings (user_id, mail, digest_at) VALUES ($1, $2, NULL) ON CONFLICT (user_id) DO UPDATE SET mail = excluded.mail',
      [userId, mail],
    );
  }

  /**
   * Marks the account's next digest as due at `due`, unless one is
   * scheduled already (due after `now`); answers whether it did, and so
   * whether the caller is to queue its job. One UPDATE: of two transactions
   * that race, the second finds the first's digest scheduled.
   */
  async scheduleDigest(userId: string, due: number, now: number): Promise<boolean> {
    return (
      (await this.db.execute(`UPDATE notification_settings SET digest_at = $2 WHERE user_id = $1 AND mail = 'digest' AND (digest_at IS NULL OR digest_at <= $3)`, [
        userId,
        due,
        now,
      ])) === 1
    );
  }

  /** The digest due by `now` ran: the next notification schedules the next one (one scheduled since, for later, stays). */
  async digestDone(userId: string, now: number): Promise<void> {
    await this.db.execute('UPDATE notification_settings SET digest_at = NULL WHERE user_id = $1 AND digest_at <= $2', [userId, now]);
  }
}
