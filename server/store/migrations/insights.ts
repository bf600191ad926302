/**
 * Migration 21: listener insights.
 * - player_plays: one row per play (a listening of one file on one player),
 *   under the random id the player page made for it, with the most seconds
 *   heard and the farthest position it reported, and the listener's display
 *   name (null: Anonymous). Nothing else about the listener is kept: no
 *   address, user agent, session or fingerprint.
 * - player_downloads: how many downloads of each file went through each
 *   player's view.
 * Both go with their player, and with the file.
 */
export function insightsSchema(bigint: string): string {
  return `
CREATE TABLE player_plays (
  player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
  play_id TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES boxes(id) ON DELETE CASCADE,
  listener_name TEXT,
  heard DOUBLE PRECISION NOT NULL,
  position DOUBLE PRECISION NOT NULL,
  time_created ${bigint} NOT NULL,
  time_modified ${bigint} NOT NULL,
  PRIMARY KEY (player_id, play_id)
);
CREATE INDEX player_plays_file ON player_plays(file_id);
CREATE TABLE player_downloads (
  player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
  file_id TEXT NOT NULL REFERENCES boxes(id) ON DELETE CASCADE,
  downloads ${bigint} NOT NULL,
  PRIMARY KEY (player_id, file_id)
);
CREATE INDEX player_downloads_file ON player_downloads(file_id);
`;
}
