/**
 * Migration 31: listeners told apart by who they are (issue 28, "One door":
 * "Insights merge a guest into the member whose name they type").
 *
 * - player_plays.listener_key: who played, as insights group them: an
 *   account (`account:` and its id) for a signed-in listener, a guest
 *   (`guest:` and a SHA-256 digest of their player session's id) for one
 *   who gave a display name, NULL for Anonymous. A display name is what a
 *   listener chose to type, so it names nobody: grouped by it, a guest who
 *   typed a member's name was counted as that member. The session's id is
 *   kept only as a digest, so nothing in this table is an id the player
 *   sessions or comments carry (comments keep author_session_id itself).
 * - Plays of before keep what they had, their name: `name:` and the name,
 *   so they stay grouped as they were (nothing else tells their listeners
 *   apart), and no key of now can be one of them.
 * - player_plays_listener: a renewed session's plays are found by its
 *   former keys (InsightsRepository.rekey), on every report it sends.
 */
export function insightsListenersSchema(): string {
  return `
ALTER TABLE player_plays ADD COLUMN listener_key TEXT;
UPDATE player_plays SET listener_key = 'name:' || listener_name WHERE listener_name IS NOT NULL;
CREATE INDEX player_plays_listener ON player_plays(player_id, listener_key);
`;
}
