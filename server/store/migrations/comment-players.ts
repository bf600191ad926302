/**
 * Migration 11: the player a comment was made on. A listener's comment
 * belongs to the player it was made on, and shows there only: a listener of
 * a collaborators-only review must not be read on a public player of the
 * same file. Members' comments show on every player with comments on, and
 * every comment shows to members through the API.
 *
 * - player_id: the player the comment was written through; null for one
 *   written through the API. A deleted player leaves its comments to the
 *   project's members (ON DELETE SET NULL): no player shows them again.
 * - Listeners' comments made before this migration have no player on
 *   record, and so show on no player, only to members through the API:
 *   which player they came from cannot be known, and showing them on every
 *   player is the leak this closes.
 */
export function commentPlayersSchema(): string {
  return `
ALTER TABLE comments ADD COLUMN player_id TEXT REFERENCES players(id) ON DELETE SET NULL;
CREATE INDEX comments_player ON comments(player_id);
`;
}
