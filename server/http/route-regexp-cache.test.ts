import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../testing/harness.ts';
import { pathToRegexpModule, routeRegexpCacheStats, validatorCaller } from './route-regexp-cache.ts';

const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const versionOf = (packageJson: string) => (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;

/**
 * The patch in route-regexp-cache.ts reaches into the validator's dependency.
 * These tests fail when an upgrade of either package changes what it relies on.
 */
describe('route pattern cache of the validator, on sqlite', () => {
  const t = useTestServer('sqlite');

  it('patches the versions pinned in package.json, exactly', () => {
    const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const validatorVersion = versionOf(require.resolve('express-openapi-validator/package.json'));
    const pathToRegexpVersion = versionOf(join(dirname(createRequire(validatorCaller).resolve('path-to-regexp')), '../package.json'));
    expect({ validator: dependencies['express-openapi-validator'], pathToRegexp: dependencies['path-to-regexp'] }).toEqual({
      validator: validatorVersion,
      pathToRegexp: pathToRegexpVersion,
    });
  });

  it('patches the module object the validator calls pathToRegexp through, on every request', () => {
    const source = readFileSync(validatorCaller, 'utf8');
    // The validator holds the module object, not the function: a patch of the object reaches it.
    expect(source).toContain('const path_to_regexp_1 = require("path-to-regexp");');
    const lookupRoute = source.slice(source.indexOf('function lookupRoute('));
    expect(lookupRoute).toContain('(0, path_to_regexp_1.pathToRegexp)(expressRoute, pathOpts)');
    // The same module object, as the validator's file resolves it.
    expect(createRequire(validatorCaller)('path-to-regexp')).toBe(pathToRegexpModule);
  });

  it('serves a repeated request from the cache: every route tried is a hit, none compiled again', async () => {
    const { token } = await t.as('cache@example.com');
    // A documented path with a method it does not have: the route index (validator-route-index.ts) leaves it to the
    // validator's own loop over every route, which answers 405. The first request may compile the patterns it tries
    // (other tests in this process may have done it already).
    expect((await t.fetch('/me', { token, method: 'PUT' })).status).toBe(405);
    const before = { ...routeRegexpCacheStats };
    expect((await t.fetch('/me', { token, method: 'PUT' })).status).toBe(405);
    expect(routeRegexpCacheStats.misses).toBe(before.misses);
    expect(routeRegexpCacheStats.hits).toBeGreaterThan(before.hits);
  });

  it('gives back what path-to-regexp compiles', () => {
    const cached = pathToRegexpModule.pathToRegexp('/api/v1/players/:playerid', { sensitive: false, strict: false }) as { regexp: RegExp; keys: { name: string }[] };
    expect(pathToRegexpModule.pathToRegexp('/api/v1/players/:playerid', { sensitive: false, strict: false })).toBe(cached);
    expect(cached.regexp.exec('/api/v1/players/pl_123')?.[1]).toBe('pl_123');
    expect(cached.regexp.exec('/api/v1/players/pl_123/more')).toBeNull();
    expect(cached.keys.map((key) => key.name)).toEqual(['playerid']);
  });
});
