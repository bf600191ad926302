/**
 * Migration 3: a version on every mutable resource (projects, players, users'
 * preferences, boxes), bumped by each update, exposed as an ETag and checked
 * against If-Match. (Filled in by the concurrency work.)
 */
export function versionsSchema(_bigint: string): string {
  return `SELECT 1;`;
}
