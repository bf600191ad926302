/**
 * Migration 9: players' public upload portals (server/resources/portal/).
 *
 * - A file sent through a portal has no account behind it, only the name
 *   (and, if given, the email) its uploader typed: kept on the file box, for
 *   the project's members to see who sent it. Files uploaded by members keep
 *   uploader_id, and these stay NULL.
 * - portal_uploads: one row per tus upload (its id is the tus upload id),
 *   with the file box it fills, so that every request of a resumable upload
 *   can be checked against its player, and a portal's total counted.
 * - players.portal_folder_id: the folder "Portal uploads" a player's portal
 *   made, so that it is made once and found again even if it is renamed.
 */
export function portalSchema(bigint: string): string {
  return `
ALTER TABLE boxes ADD COLUMN uploader_name TEXT;
ALTER TABLE boxes ADD COLUMN uploader_email TEXT;
ALTER TABLE players ADD COLUMN portal_folder_id TEXT;

CREATE TABLE portal_uploads (
  id TEXT PRIMARY KEY,
  player_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  box_id TEXT NOT NULL,
  size ${bigint} NOT NULL,
  time_created ${bigint} NOT NULL,
  time_completed ${bigint}
);
CREATE INDEX portal_uploads_player ON portal_uploads(player_id);
`;
}
