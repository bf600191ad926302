/**
 * Whether a state-changing request from a browser comes from our own pages,
 * the defence against cross-site request forgery (login CSRF included) that
 * needs no token: the browser itself says where the request comes from.
 *
 * - Fetch Metadata (W3C): "Sec-Fetch-Site … indicates the relationship
 *   between a request initiator's origin and its target's origin". Browsers
 *   send it on every request and pages cannot set it. When present it
 *   decides: only `same-origin` passes (`same-site` would trust sibling
 *   subdomains; `none` is a navigation the user typed, never a form).
 * - Otherwise RFC 6454 section 7 / the Fetch standard: browsers send `Origin`
 *   on every POST. It must be the origin of PUBLIC_URL; `null` (a sandboxed
 *   or privacy-sensitive context) does not pass.
 * - A request with neither is refused: every browser that runs our pages
 *   sends at least one of them, and other clients have no business here.
 */
export type OriginVerdict = { allowed: true } | { allowed: false; reason: string };

export function checkSameOrigin(headers: { 'sec-fetch-site'?: string; origin?: string }, publicOrigin: string): OriginVerdict {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) {
    return site === 'same-origin' ? { allowed: true } : { allowed: false, reason: `it was sent from another site (Sec-Fetch-Site: ${site})` };
  }
  const origin = headers.origin;
  if (origin === undefined) return { allowed: false, reason: 'it says neither where it comes from (no Origin header) nor what sent it (no Sec-Fetch-Site header)' };
  return origin.toLowerCase() === publicOrigin.toLowerCase() ? { allowed: true } : { allowed: false, reason: `it comes from ${origin}, not from ${publicOrigin}` };
}
