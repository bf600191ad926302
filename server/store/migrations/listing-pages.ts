/**
 * Migration 28: the pages of the long lists are read from indexes, in the
 * lists' own orders (http/paging.ts), so that a page costs the same at the
 * start of a list of 100,000 as deep inside it, or in a list of 1,000:
 *
 * - players_owner_page: an account's players newest first, then by id
 *   (GET /players); players_project_owner finds the players of its projects
 *   recorded under another owner (player-repository.ts listOwnedByPage).
 * - boxes_page: a project's boxes that are not hidden, of one kind, oldest
 *   first, then by id (GET /projects/:id/all with `limit` or `cursor`).
 *
 * The id is the tie-break of every order, compared by code unit (lib/
 * sort-keys.ts compareKeys). SQLite's default collation (BINARY) does; on
 * PostgreSQL the database's collation may not, so there it is "C", the
 * collation the pages' queries compare and order ids in.
 */
export function listingPagesSchema(dialect: 'sqlite' | 'postgres'): string {
  const byCodeUnit = dialect === 'postgres' ? ' COLLATE "C"' : '';
  return `
CREATE INDEX players_owner_page ON players(owner_id, time_created DESC, id${byCodeUnit});
CREATE INDEX players_project_owner ON players(project_id, owner_id);
CREATE INDEX boxes_page ON boxes(project_id, hidden, kind, time_created, id${byCodeUnit});
`;
}
