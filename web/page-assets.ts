/**
 * The pages' static files under /assets: the player's bundle (built from
 * web/player/ into generated/player/ by scripts/build-player.ts) and the
 * icons (web/assets/). Links carry a hash of the files' bytes (`?v=`), so a
 * browser may keep them for a year: a changed file gets a new link.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import express, { Router } from 'express';

export const ICON_DIR = join(import.meta.dirname, 'assets');
export const BUNDLE_DIR = resolve(import.meta.dirname, '../generated/player');

const ASSETS = { 'player.js': BUNDLE_DIR, 'player.css': BUNDLE_DIR, 'icon.svg': ICON_DIR } as const;
export type AssetName = keyof typeof ASSETS;

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
  const fromIcons = express.static(ICON_DIR, options);
  // An allow-list of names, not whole folders: the bundle's licence notices are served too, under their own name.
  router.use('/assets', (req, res, next) => {
    const name = req.path.slice(1);
    if (name === 'LICENSES.txt') return fromBundle(req, res, next);
    if (!Object.hasOwn(ASSETS, name)) return next();
    (ASSETS[name as AssetName] === BUNDLE_DIR ? fromBundle : fromIcons)(req, res, next);
  });
  return router;
}
