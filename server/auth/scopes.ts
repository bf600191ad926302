/**
 * What a credential's scopes cover. The spec's rule (the `oauth2` security
 * scheme): each operation names the one scope it needs, and "a write on a
 * resource implies its read": a token with `projects:write` may read
 * projects too, since every write answers with what it wrote. Nothing else
 * implies anything: `account:write` is the person's own account, never the
 * server's administration, which is `admin` alone.
 */

/** Whether a credential holding `held` may call an operation that needs `needed`. */
export function scopeCovers(held: readonly string[], needed: string): boolean {
  if (held.includes(needed)) return true;
  const read = /^([a-z]+):read$/.exec(needed);
  return read !== null && held.includes(`${read[1]}:write`);
}
