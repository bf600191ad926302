/**
 * express-openapi-validator (5.x) compiles the path pattern of every
 * documented route with path-to-regexp on every request, until one matches
 * (dist/middlewares/openapi.metadata.js, lookupRoute). The patterns never
 * change, so the compiled result is memoised here, once, for the whole
 * process. The function is pure, so this changes nothing but the cost.
 * (Since issue 23 the index of validator-route-index.ts finds documented
 * routes without that loop; the loop still runs for what it hands back: 404s
 * and 405s.)
 *
 * Measured (a micro-benchmark of lookupRoute's loop over this spec's 18
 * paths): about 31 µs per request uncached against 7 µs memoised, averaged
 * over the routes; a small read costs the server about 250 µs in all
 * (bench/README.md), so this is about a tenth of it.
 *
 * This reaches into another package's dependency, so both are pinned to exact
 * versions in package.json, and route-regexp-cache.test.ts fails when an
 * upgrade changes what the patch relies on: that the validator calls
 * `pathToRegexp` through the very module object patched here, per request.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The file of the validator that calls pathToRegexp on every request. */
export const validatorCaller = require.resolve('express-openapi-validator/dist/middlewares/openapi.metadata.js');

type PathToRegexp = (path: string, options?: Record<string, unknown>) => unknown;

/** The path-to-regexp module as that file requires it (its own copy, should npm ever nest one there). */
export const pathToRegexpModule = require(createRequire(validatorCaller).resolve('path-to-regexp')) as { pathToRegexp: PathToRegexp };

/** Counters, for the test that proves requests go through the cache. */
export const routeRegexpCacheStats = { hits: 0, misses: 0 };

let memoised = false;

const isFlagsOnly = (options: Record<string, unknown> | undefined): options is { sensitive?: boolean; strict?: boolean } => {
  if (options === undefined) return false;
  for (const name in options) if (name !== 'sensitive' && name !== 'strict') return false;
  return true;
};

export function memoiseRouteRegexps(): void {
  if (memoised) return;
  const original = pathToRegexpModule.pathToRegexp;
  if (typeof original !== 'function') {
    throw new Error('path-to-regexp no longer exports pathToRegexp: update server/http/route-regexp-cache.ts for the new version, or remove it.');
  }
  const cache = new Map<string, unknown>();
  const cached: PathToRegexp = (path, options) => {
    if (typeof path !== 'string') return original(path, options);
    // The validator passes only { sensitive, strict }, booleans; any other option makes its own key. This runs for
    // every documented route on every request, so the usual key is built without JSON.stringify.
    const key = isFlagsOnly(options) ? `${path}\u0000${options.sensitive ? 's' : ''}${options.strict ? 't' : ''}` : `${path}\u0000${JSON.stringify(options ?? {})}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      routeRegexpCacheStats.misses += 1;
      compiled = original(path, options);
      cache.set(key, compiled);
    } else {
      routeRegexpCacheStats.hits += 1;
    }
    return compiled;
  };
  // An assignment, in strict mode: should the export become a getter, this throws at start instead of doing nothing.
  pathToRegexpModule.pathToRegexp = cached;
  memoised = true;
}
