/**
 * Migration 22: notifications. One row per thing an account is told of (a
 * comment, a reply, a file through a portal, an analysis that failed),
 * written in the transaction of the event itself. It goes with its account,
 * its project, its file and its comment (ON DELETE CASCADE): a comment
 * deleted as spam stops notifying, and no link points at nothing. It goes
 * with the account that caused it too (`actor_id`, a member who commented):
 * its summary names them, and a deleted account leaves nothing of itself.
 *
 * `mail` says where its mail stands: 'pending' until it is mailed (by
 * itself or in a digest), 'sent' once its mail is queued, 'none' when it is
 * not to be mailed (the server sends no mail, or the account said never).
 * `details` holds, as JSON, what its mail says beyond the summary.
 *
 * An account's settings are a row only once it changes them (the default
 * is 'immediate'); `digest_at` is when its next digest is due, while one is
 * scheduled, so that a day's notifications schedule one digest, not many.
 */
export function notificationsSchema(bigint: string): string {
  return `
CREATE TABLE notifications (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('comment', 'reply', 'portal-upload', 'analysis-failed')),
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  file_id TEXT REFERENCES boxes(id) ON DELETE CASCADE,
  comment_id TEXT REFERENCES comments(id) ON DELETE CASCADE,
  actor_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  summary TEXT NOT NULL,
  link TEXT NOT NULL,
  details TEXT NOT NULL,
  mail TEXT NOT NULL CHECK (mail IN ('pending', 'sent', 'none')),
  time_created ${bigint} NOT NULL,
  time_read ${bigint}
);
CREATE INDEX notifications_by_user ON notifications(user_id, time_created, id);
CREATE INDEX notifications_unmailed ON notifications(user_id, mail);
CREATE INDEX notifications_by_project ON notifications(project_id);
CREATE INDEX notifications_by_file ON notifications(file_id);
CREATE INDEX notifications_by_comment ON notifications(comment_id);
CREATE INDEX notifications_by_actor ON notifications(actor_id);

CREATE TABLE notification_settings (
  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  mail TEXT NOT NULL CHECK (mail IN ('immediate', 'digest', 'never')),
  digest_at ${bigint}
);
`;
}
