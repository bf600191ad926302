/**
 * express-openapi-validator (5.x) compiles the path pattern of every
 * documented route with path-to-regexp on every request, until one matches
 * (openapi.metadata.js, lookupRoute). The patterns never change, so the
 * compiled result is memoised here, once, for the whole process. The
 * function is pure, so this changes nothing but the cost; measured in
 * bench/README.md.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const validatorEntry = require.resolve('express-openapi-validator');
const pathToRegexpModule = require(require.resolve('path-to-regexp', { paths: [validatorEntry] })) as {
  pathToRegexp: (path: string, options?: Record<string, unknown>) => unknown;
  __memoised?: boolean;
};

export function memoiseRouteRegexps(): void {
  if (pathToRegexpModule.__memoised) return;
  const original = pathToRegexpModule.pathToRegexp;
  const cache = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path, options) => {
    if (typeof path !== 'string') return original(path, options);
    const key = `${path}\u0000${JSON.stringify(options ?? {})}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = original(path, options);
      cache.set(key, compiled);
    }
    return compiled;
  };
  pathToRegexpModule.__memoised = true;
}
