/**
 * Migration 5: comments on a version of a track (a file box), their
 * reactions, and a display name for users, which members' comments show.
 *
 * - A comment belongs to one file box and goes with it: deleting the file
 *   (or its project) deletes its comments, by ON DELETE CASCADE, on both
 *   engines (SQLite runs with foreign_keys on).
 * - A reply names its top-level comment in parent_id and goes with it too.
 * - The author is a user (author_user_id) or, for a listener without an
 *   account, a player session (author_session_id). A member's comment shows
 *   the user's current name, read at each listing; a listener's shows the
 *   name their session had when they posted (author_name).
 * - A reaction is one row per comment, emoji and reactor ('user:<id>' or
 *   'session:<id>'), so the primary key holds each person to one reaction
 *   per emoji.
 */
export function commentsSchema(bigint: string): string {
  return `
ALTER TABLE users ADD COLUMN name TEXT;

CREATE TABLE comments (
  id TEXT PRIMARY KEY,
  file_id TEXT NOT NULL REFERENCES boxes(id) ON DELETE CASCADE,
  parent_id TEXT REFERENCES comments(id) ON DELETE CASCADE,
  message TEXT NOT NULL,
  audio_timestamp DOUBLE PRECISION,
  audio_timestamp_end DOUBLE PRECISION,
  completed INTEGER NOT NULL DEFAULT 0,
  pinned INTEGER NOT NULL DEFAULT 0,
  author_kind TEXT NOT NULL CHECK (author_kind IN ('member', 'listener')),
  author_user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
  author_session_id TEXT,
  author_name TEXT,
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL
);
CREATE INDEX comments_file ON comments(file_id, time_created);
CREATE INDEX comments_parent ON comments(parent_id);

CREATE TABLE comment_reactions (
  comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
  emoji TEXT NOT NULL,
  reactor TEXT NOT NULL,
  time_created ${bigint} NOT NULL,
  PRIMARY KEY (comment_id, emoji, reactor)
);
`;
}
