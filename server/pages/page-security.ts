/**
 * The security headers of the player pages. They are set by the page's own
 * route, after the app-wide ones (helmet), so they are the ones sent.
 *
 * The Content-Security-Policy allows nothing but our own origin, and only
 * for what the pages use: the bundled script and stylesheet (static files,
 * no inline code), the artwork (img), the audio (media), and the page's calls
 * to its own API and peaks files (connect), all on PUBLIC_URL, the pages' own
 * origin. `base-uri 'none'` stops an injected <base> from redirecting
 * relative links; `form-action 'none'`: the page's forms are handled by its
 * script and post nowhere.
 *
 * Framing: the full page says `frame-ancestors 'none'`. It holds comment
 * forms and download links that a hidden frame could trick a listener into
 * using, and the password form, which must never sit in a frame
 * (clickjacking, phishing). The compact /embed page is made to sit in an
 * iframe on any site: it has no forms (no comments, and a locked player only
 * links out to the full page), so it allows any ancestor.
 */
import type { Response } from 'express';

/**
 * `bucketOrigin`: with an S3-compatible blob store, the signed URLs of the
 * audio, peaks and artwork answer with a redirect to the bucket
 * (downloads-service.ts), and CSP checks where a load ends up, redirects
 * included (CSP3 §4.2.1: "the request's current URL"); so the bucket's
 * origin, and no other, is allowed for those three, and nothing else.
 */
function policy(frameAncestors: string, bucketOrigin?: string): string {
  const fromBucket = bucketOrigin ? ` ${bucketOrigin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${fromBucket}`,
    `media-src 'self'${fromBucket}`,
    `connect-src 'self'${fromBucket}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

export const PAGE_CSP = policy("'none'");
/** CSP's `*` in frame-ancestors matches any http(s) origin (CSP3 §6.4.2, "frame-ancestors"). */
export const EMBED_CSP = policy('*');

export function sendPage(res: Response, status: number, html: string, { embed = false, bucketOrigin }: { embed?: boolean; bucketOrigin?: string } = {}): void {
  res.setHeader('Content-Security-Policy', policy(embed ? '*' : "'none'", bucketOrigin));
  // The pages' URLs and the signed URLs in them go to no other site.
  res.setHeader('Referrer-Policy', 'no-referrer');
  // frame-ancestors for browsers that predate it; the embed page sends none (helmet's default is removed).
  if (embed) res.removeHeader('X-Frame-Options');
  else res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The shell holds no signed URL, but a preview's artwork URL expires: no cache keeps the page.
  res.setHeader('Cache-Control', 'private, no-store');
  res.status(status).type('html').send(html);
}
