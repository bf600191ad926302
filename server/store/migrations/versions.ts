/**
 * Migration 3: a version on every mutable resource (projects, players, users'
 * preferences, boxes), bumped by each update in the statement or transaction
 * that makes it, exposed as an ETag and checked against If-Match. Existing
 * rows start at version 1, as new ones do.
 */
export function versionsSchema(bigint: string): string {
  return `
ALTER TABLE projects ADD COLUMN version ${bigint} NOT NULL DEFAULT 1;
ALTER TABLE players ADD COLUMN version ${bigint} NOT NULL DEFAULT 1;
ALTER TABLE boxes ADD COLUMN version ${bigint} NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN preferences_version ${bigint} NOT NULL DEFAULT 1;
`;
}
