/**
 * Migration 14: what arrives through an upload portal is held until a
 * project member moves it (server/resources/portal/, listening/player-tracks.ts).
 *
 * - boxes.held: 1 on a portal's folder ("Portal uploads"), where every file a
 *   stranger sends lands; no player shows what is inside a held folder. The
 *   folders portals made before this are held from now on.
 */
export function portalHeldSchema(): string {
  return `
ALTER TABLE boxes ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
UPDATE boxes SET held = 1 WHERE id IN (SELECT portal_folder_id FROM players WHERE portal_folder_id IS NOT NULL);
`;
}
