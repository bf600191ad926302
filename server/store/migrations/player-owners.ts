/**
 * Migration 12: a player belongs to the owner of its project.
 *
 * - players.created_by: who created the player (an editor or admin of the
 *   project may), kept for the record. Filled from owner_id, which held the
 *   creator until now.
 * - players.owner_id: from now on always the owner of the player's project.
 *   A player an editor made in someone else's project was theirs: it was
 *   listed as theirs, and its checkouts paid their connected account, even
 *   after the owner removed them. Every such row is given to the project's
 *   owner here.
 */
export function playerOwnersSchema(): string {
  return `
ALTER TABLE players ADD COLUMN created_by TEXT;
UPDATE players SET created_by = owner_id;
UPDATE players SET owner_id = (SELECT projects.owner_id FROM projects WHERE projects.id = players.project_id)
  WHERE owner_id <> (SELECT projects.owner_id FROM projects WHERE projects.id = players.project_id);
`;
}
