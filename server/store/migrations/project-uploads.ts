/**
 * Migration 23: resumable uploads of project members, over tus 1.0.0
 * (server/resources/project-uploads/).
 *
 * - project_uploads: one row per tus upload (its id is the tus upload id),
 *   with the file box it fills and who started it, so that every request of
 *   a resumable upload can be checked against its project, and a HEAD after
 *   completion can still name the file (the row is kept, completed).
 * - room_bytes: what an unfinished upload takes in its owner's storage
 *   quota, as portal_uploads.room_bytes does (migration 13): the bytes
 *   stored, and while a request streams bytes to it, those it announced.
 */
export function projectUploadsSchema(bigint: string): string {
  return `
CREATE TABLE project_uploads (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  box_id TEXT NOT NULL,
  size ${bigint} NOT NULL,
  room_bytes ${bigint} NOT NULL DEFAULT 0,
  time_created ${bigint} NOT NULL,
  time_completed ${bigint}
);
CREATE INDEX project_uploads_box ON project_uploads(box_id);
CREATE INDEX project_uploads_unfinished ON project_uploads(time_created) WHERE time_completed IS NULL;
`;
}
