/**
 * The pages' script and stylesheet, served as static files from web/assets
 * under /assets, so that the pages' CSP needs no inline script or style.
 * Links carry a hash of the files' bytes (`?v=`), so a browser may keep them
 * for a year: a changed file gets a new link.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';

export const ASSET_DIR = join(import.meta.dirname, 'assets');
export const ASSET_FILES = ['player.css', 'player.js', 'icon.svg'] as const;
export type AssetName = (typeof ASSET_FILES)[number];

const version = (() => {
  const hash = createHash('sha256');
  for (const name of ASSET_FILES) hash.update(readFileSync(join(ASSET_DIR, name)));
  return hash.digest('base64url').slice(0, 12);
})();

/** The link to an asset, below the path PUBLIC_URL may carry (`basePath`, without a trailing slash). */
export const assetHref = (basePath: string, name: AssetName) => `${basePath}/assets/${name}?v=${version}`;

export function assetRoutes(): Router {
  const router = Router();
  router.use(
    '/assets',
    express.static(ASSET_DIR, {
      index: false,
      redirect: false,
      dotfiles: 'deny',
      setHeaders(res) {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // Only the current version is immutable; a link to an older one revalidates.
        const requested = new URL(res.req.originalUrl, 'http://x').searchParams.get('v');
        res.setHeader('Cache-Control', requested === version ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}
