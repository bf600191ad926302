/**
 * Migration 27: what a library shows of each project (the size of its files
 * and the last change of its boxes, project-repository.ts CONTENT) is read
 * from indexes alone. Without them, listing a library read every box of
 * every project from the table, twice: a 1,000-project library took tens of
 * milliseconds, and one project of 10,000 boxes ten by itself.
 *
 * - boxes_content covers the size: the files of a project not in the
 *   trash, by status, with their sizes in the index.
 * - boxes_modified answers the last change with one step to the end of the
 *   project's entries (SQLite's and PostgreSQL's MAX over an index).
 */
export function projectContentSchema(): string {
  return `
CREATE INDEX boxes_content ON boxes(project_id, kind, trashed, status, size);
CREATE INDEX boxes_modified ON boxes(project_id, time_modified);
`;
}
