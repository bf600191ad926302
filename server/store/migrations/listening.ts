/**
 * Migration 6: what a listener's access needs.
 * - players: an optional password (its scrypt hash) and an optional expiry;
 * - player_collaborators: each collaborator's invite link, derived from an
 *   HMAC over player, email and a per-collaborator nonce (a new nonce is a
 *   new link, the old one dead), when it was used (a link works once), and
 *   when the collaborator was invited (existing ones: with their player);
 * - player_purchases: paid paywalls (records a test creates until payments
 *   arrive with the paywall issue).
 */
export function listeningSchema(bigint: string): string {
  return `
ALTER TABLE players ADD COLUMN password_hash TEXT;
ALTER TABLE players ADD COLUMN expires ${bigint};
ALTER TABLE player_collaborators ADD COLUMN invite_nonce TEXT;
ALTER TABLE player_collaborators ADD COLUMN invite_used ${bigint};
ALTER TABLE player_collaborators ADD COLUMN time_invited ${bigint} NOT NULL DEFAULT 0;
UPDATE player_collaborators SET time_invited = (SELECT time_created FROM players WHERE players.id = player_collaborators.player_id);
CREATE TABLE player_purchases (
  id TEXT PRIMARY KEY,
  player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
  time_created ${bigint} NOT NULL
);
CREATE INDEX player_purchases_player ON player_purchases(player_id);
`;
}
