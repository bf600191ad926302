/**
 * The response headers a security scanner expects, set by helmet on every
 * response before any route runs. A route that needs other values sets its
 * own afterwards, and its res.setHeader wins: the player pages send their
 * own Content-Security-Policy, the signed downloads theirs
 * (`sandbox; default-src 'none'`) and their own Cross-Origin-Resource-Policy.
 *
 * - Content-Security-Policy `default-src 'none'; frame-ancestors 'none'`:
 *   API answers are data; nothing in them may load, run or be framed.
 * - X-Content-Type-Options `nosniff`: a browser takes the declared type.
 * - Referrer-Policy `no-referrer`: signed URLs and player ids in our URLs
 *   never leak to another site.
 * - Cross-Origin-Resource-Policy `same-origin`: other sites cannot embed our
 *   answers as no-cors subresources (<script>, <img>). It does not touch CORS:
 *   "If request's mode is not "no-cors", then return allowed" (Fetch,
 *   cross-origin resource policy internal check), so browser apps on other
 *   origins keep calling the API with fetch().
 * - X-Frame-Options `DENY`, for browsers that predate frame-ancestors; one
 *   that knows frame-ancestors ignores it (CSP 3, section 6.4.2), so a page
 *   that allows framing in its own CSP is framed.
 * - Strict-Transport-Security only when PUBLIC_URL is https: over plain
 *   http a browser ignores it (RFC 6797 section 8.1), and a server on
 *   loopback or behind a TLS proxy on http has no business pinning its host.
 *   No includeSubDomains: other hosts of the domain are not ours to pin.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

export const apiContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'";

export function securityHeaders({ publicUrl }: { publicUrl: string }) {
  const others = helmet({
    // Set below, as one constant, written as the standard's examples write it (helmet leaves out the space).
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: 'same-origin' },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: publicUrl.startsWith('https:') ? { maxAge: 365 * 24 * 3600, includeSubDomains: false } : false,
  });
  // helmet's headers do not depend on the request: they are taken from it once, here, and set from a list on every
  // response, instead of through helmet's dozen middlewares per request (issue 23: a small read's cost).
  const fixed: Array<[string, string]> = [['Content-Security-Policy', apiContentSecurityPolicy], ...headersOf(others)];
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of fixed) res.setHeader(name, value);
    // helmet also removes X-Powered-By (its xPoweredBy middleware), which no list of headers to set can say.
    res.removeHeader('X-Powered-By');
    next();
  };
}

/** The headers a helmet middleware sets, read by running it once on a response that only records them. */
function headersOf(middleware: (req: Request, res: Response, next: (error?: unknown) => void) => void): Array<[string, string]> {
  const set = new Map<string, string>();
  let finished = false;
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => set.set(name, String(value)),
    removeHeader: (name: string) => set.delete(name),
    getHeader: (name: string) => set.get(name),
  };
  middleware({ headers: {}, get: () => undefined } as unknown as Request, recorder as unknown as Response, (error) => {
    if (error) throw error;
    finished = true;
  });
  // helmet's middlewares all finish at once, with no I/O; one that did not would set headers per request after all.
  if (!finished) throw new Error('helmet no longer sets its headers synchronously: set them per request again in security-headers.ts.');
  return [...set];
}

/**
 * The CSP of the docs page, a Redoc build with everything inlined: its
 * scripts are allowed by their SHA-256 (so nothing injected into the page
 * could run), its styles inline (styled-components writes <style> elements
 * at run time, which no hash can name), images and fonts from the page
 * itself and data: URIs, and requests to this origin only. Nothing from a
 * third party: the build replaces Redoc's "API docs by Redocly" logo from
 * cdn.redoc.ly with an empty image (scripts/generate.ts). No eval either: the
 * search index tries to build a worker with Function() and, refused, indexes
 * on the page instead (tested in Chromium, docs.test.ts).
 */
export function docsPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map(([, body]) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
  return [
    "default-src 'none'",
    `script-src ${[...new Set(hashes)].join(' ') || "'none'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The CSP of the changelog page (generated/changelog.html): static HTML with
 * no script at all, its one inline stylesheet allowed by its SHA-256, images
 * (the favicon) from this origin, and nothing else: no request anywhere, no
 * form, no framing.
 */
export function changelogPolicy(html: string): string {
  const hashes = [...html.matchAll(/<style>([\s\S]*?)<\/style>/gi)].map(([, body]) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
  return [
    "default-src 'none'",
    "script-src 'none'",
    `style-src ${[...new Set(hashes)].join(' ') || "'none'"}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
