/**
 * The account's browser session cookie. Its value is the session's secret;
 * the server keeps only its hash (server/resources/sessions/).
 *
 * RFC 6265bis, 4.1.3.2: a cookie named with the `__Host-` prefix is set only
 * "with a Secure attribute", "from a secure origin", with "a Path attribute
 * with a value of /" and no Domain attribute, so no sibling subdomain or
 * plain-http page can plant or overwrite it. The prefix needs https, so a
 * server whose PUBLIC_URL is http (a laptop, the tests) names it plainly.
 */
import { serialize } from 'cookie';

export const SESSION_COOKIE = 'as_session';
export const SECURE_SESSION_COOKIE = '__Host-as_session';

const isHttps = (publicUrl: string) => publicUrl.startsWith('https:');

export function sessionCookieName(publicUrl: string): string {
  return isHttps(publicUrl) ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** Set-Cookie for a new session, kept by the browser for the session's whole life (the server ends it sooner when idle). */
export function sessionCookie(publicUrl: string, secret: string, maxAgeMs: number): string {
  return serialize(sessionCookieName(publicUrl), secret, {
    httpOnly: true,
    // Lax: sent on top-level navigations from other sites (a link to the studio works signed in), withheld from their
    // forms, images and fetches; the API refuses changes from other origins besides (server/http/auth.ts).
    sameSite: 'lax',
    secure: isHttps(publicUrl),
    path: '/',
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

/** Set-Cookie that removes the session cookie. */
export function clearedSessionCookie(publicUrl: string): string {
  return serialize(sessionCookieName(publicUrl), '', { httpOnly: true, sameSite: 'lax', secure: isHttps(publicUrl), path: '/', maxAge: 0 });
}
