/**
 * Migration 4: upload claims with a deadline, so that a PUT cut off by a
 * crash does not hold its upload forever. (Filled in by the upload work.)
 */
export function uploadClaimsSchema(_bigint: string): string {
  return `SELECT 1;`;
}
