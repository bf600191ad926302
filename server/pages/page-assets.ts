/**
 * The pages' static files under /assets: the player's bundle (built from
 * web/player/ into generated/player/ by scripts/build-player.ts) and the
 * icons (web/assets/). Links carry a hash of the files' bytes (`?v=`), so a
 * browser may keep them for a year: a changed file gets a new link.
 *
 * The bundle is sent gzipped to a browser that accepts it (about 94 KB
 * instead of 346 KB), compressed once, at first request, not per request.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import fresh from 'fresh';
import { join, resolve } from 'node:path';
import express, { Router } from 'express';

export const ICON_DIR = resolve(import.meta.dirname, '../../web/assets');
export const BUNDLE_DIR = resolve(import.meta.dirname, '../../generated/player');

const ASSETS = {
  'player.js': BUNDLE_DIR,
  'player.css': BUNDLE_DIR,
  'portal.js': BUNDLE_DIR,
  'portal.css': BUNDLE_DIR,
  'account.js': BUNDLE_DIR,
  'account.css': BUNDLE_DIR,
  'studio.js': BUNDLE_DIR,
  'studio.css': BUNDLE_DIR,
  'icon.svg': ICON_DIR,
} as const;
export type AssetName = keyof typeof ASSETS;
/** The bundled pages' scripts and stylesheets: the player's, the upload portal's, the account pages' and the studio's. */
const BUNDLE_NAMES = ['player.js', 'player.css', 'portal.js', 'portal.css', 'account.js', 'account.css', 'studio.js', 'studio.css'] as const;
type BundleName = (typeof BUNDLE_NAMES)[number];

const version = (() => {
  const hash = createHash('sha256');
  for (const [name, dir] of Object.entries(ASSETS)) hash.update(readFileSync(join(dir, name)));
  return hash.digest('base64url').slice(0, 12);
})();

/** The link to an asset, below the path PUBLIC_URL may carry (`basePath`, without a trailing slash). */
export const assetHref = (basePath: string, name: AssetName) => `${basePath}/assets/${name}?v=${version}`;

export function assetRoutes(): Router {
  const router = Router();
  const options = {
    index: false,
    redirect: false,
    dotfiles: 'deny',
    setHeaders(res: express.Response) {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      // Only the current version is immutable; a link to an older one revalidates.
      const requested = new URL(res.req.originalUrl, 'http://x').searchParams.get('v');
      res.setHeader('Cache-Control', requested === version ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  } as const;
  const fromBundle = express.static(BUNDLE_DIR, options);
  const gzipped = new Map<string, { body: Buffer; etag: string }>();
  const gzippedBundle = (name: BundleName) => {
    let file = gzipped.get(name);
    if (!file) {
      const body = gzipSync(readFileSync(join(BUNDLE_DIR, name)), { level: 9 });
      file = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}-gz"` };
      gzipped.set(name, file);
    }
    return file;
  };
  const fromIcons = express.static(ICON_DIR, options);
  // An allow-list of names, not whole folders: the bundle's licence notices are served too, under their own name.
  router.use('/assets', (req, res, next) => {
    const name = req.path.slice(1);
    if (name === 'LICENSES.txt') return fromBundle(req, res, next);
    if (!Object.hasOwn(ASSETS, name)) return next();
    if (BUNDLE_NAMES.includes(name as BundleName)) {
      // RFC 9110 §12.5.3: the answer depends on Accept-Encoding, so caches must key on it.
      res.vary('Accept-Encoding');
      if ((req.method === 'GET' || req.method === 'HEAD') && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
        const file = gzippedBundle(name as BundleName);
        options.setHeaders(res);
        res.setHeader('Content-Type', name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
        res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('ETag', file.etag);
        // RFC 9110 §13.1.2 If-None-Match alone: an origin server evaluates it whatever the request's Cache-Control says.
        const ifNoneMatch = req.headers['if-none-match'];
        if (ifNoneMatch && fresh({ 'if-none-match': ifNoneMatch }, { etag: file.etag })) return void res.status(304).end();
        res.setHeader('Content-Length', String(file.body.length));
        return void res.status(200).end(req.method === 'HEAD' ? undefined : file.body);
      }
    }
    (ASSETS[name as AssetName] === BUNDLE_DIR ? fromBundle : fromIcons)(req, res, next);
  });
  return router;
}
