/**
 * The security headers of every player page. They are set by the page's own
 * route, after the app-wide ones (helmet), so they are the ones sent.
 *
 * The Content-Security-Policy allows nothing but our own origin, and only
 * for what the pages use: the script and the stylesheet (static files, no
 * inline code), the artwork (img) and the audio (media), all on PUBLIC_URL,
 * which is the pages' own origin. `connect-src 'self'` is for the player's
 * coming calls to its own API. `base-uri 'none'` stops an injected <base>
 * from redirecting relative links; `form-action 'self'` keeps the sign-in
 * form (and any injected one) posting home.
 *
 * `frame-ancestors 'none'` on every page, the player page included: the
 * sign-in page must never sit in a frame (a framed sign-in invites
 * clickjacking and phishing), and the full player page carries download
 * links and, soon, comments, which a hidden frame could trick a listener
 * into using. Embedding on other sites is the job of a compact embed page
 * (the player issue) with its own, deliberate frame-ancestors.
 */
import type { Response } from 'express';

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function sendPage(res: Response, status: number, html: string): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  // The pages' URLs and the signed URLs in them go to no other site.
  res.setHeader('Referrer-Policy', 'no-referrer');
  // frame-ancestors for browsers that predate it.
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Pages hold signed URLs and, behind a session, what only collaborators see: no cache keeps them.
  res.setHeader('Cache-Control', 'private, no-store');
  res.status(status).type('html').send(html);
}
