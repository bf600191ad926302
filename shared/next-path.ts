/**
 * Where a sign-in may send the person back to (`next`): an app's consent
 * page on this server (/signin?next=/oauth/interaction/…, where the
 * authorization server sends someone not signed in), and nothing else.
 * Only that one kind of path on this origin, in letters, digits, `/`, `_`
 * and `-`: no scheme, no host, no `//`, no `..`, no query, so `next` is
 * never an open redirect. The password and passkey sign-in (the browser)
 * and single sign-on's round trip (the server) both hold `next` to it.
 */

/** The longest `next` kept: an interaction's path is far shorter. */
const MAX_NEXT = 512;

/** `next` when it is a path sign-in may return to, else undefined. */
export function safeNext(basePath: string, next: string | null | undefined): string | undefined {
  if (typeof next !== 'string' || next.length > MAX_NEXT) return undefined;
  return next.startsWith(`${basePath}/oauth/interaction/`) && /^[A-Za-z0-9/_-]+$/.test(next) ? next : undefined;
}

/** Where a sign-in lands: back to `next` when it may, else home. */
export function nextAfterSignIn(basePath: string, next: string | null | undefined): string {
  return safeNext(basePath, next) ?? `${basePath}/`;
}
