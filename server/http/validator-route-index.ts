/**
 * express-openapi-validator (5.x) finds a request's operation by trying every
 * documented route, in the spec's order, until one pattern matches
 * (dist/middlewares/openapi.metadata.js, lookupRoute): with this spec's 80-odd
 * paths that loop was the largest single cost of a small read, about a sixth
 * of the server's CPU on `GET /players/:id` (bench/README.md, issue 23).
 *
 * This wraps the validator's metadata middleware with an index of the same
 * routes by their number of path segments: a route's pattern matches only
 * paths with as many segments (a parameter matches `[^/]+`, never a `/`), so
 * the routes tried are those of the request's segment count, in the spec's
 * order, and the first match is the one the validator's loop would find.
 * What the middleware sets on a match is what the validator sets
 * (`req.openapi`, `req.params`). Everything else (no match: the validator's
 * 404 or 405; an ignored path; a malformed escape) goes to the validator's
 * own middleware, unchanged. validator-route-index.test.ts compares the two
 * on every documented route and on paths near them.
 *
 * Like route-regexp-cache.ts this reaches into the validator's files, pinned
 * to an exact version in package.json; the test fails when an upgrade
 * changes what the index relies on.
 */
import { createRequire } from 'node:module';
import type { NextFunction, Request, Response } from 'express';
import { pathToRegexpModule, validatorCaller } from './route-regexp-cache.ts';

const require = createRequire(import.meta.url);

/** The validator's module whose export it calls (through the module object) to make its metadata middleware. */
export const metadataModule = require(validatorCaller) as { applyOpenApiMetadata: MakeMetadataMiddleware };

type Middleware = (req: Request, res: Response, next: NextFunction) => void;
type MakeMetadataMiddleware = (context: OpenApiContext, responseApiDoc?: ApiDoc) => Middleware;
type ApiDoc = { paths: Record<string, Record<string, unknown>> };
/** What the middleware reads of the validator's OpenApiContext (framework/openapi.context.js). */
interface OpenApiContext {
  expressRouteMap: Record<string, { basePath: string; _openApiRoute: string }>;
  apiDoc: ApiDoc;
  useRequestUrl: boolean;
  serial: number;
  shouldIgnoreRoute(path: string): boolean;
}

interface IndexedRoute {
  expressRoute: string;
  openApiRoute: string;
  pathKey: string;
  regexp: RegExp;
  paramNames: string[];
}

/** Segments of a path, as the patterns count them: a trailing `/` is allowed by every pattern (strict routing is off). */
const segmentsOf = (path: string) => {
  let count = 0;
  const end = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
  for (let i = 0; i < end; i++) if (path.charCodeAt(i) === 47) count++;
  return count;
};

/** The validator's own, before indexValidatorRoutes replaced it: the tests compare the two. */
export const validatorsOwnMetadata = metadataModule.applyOpenApiMetadata;

let installed = false;

/** Installs the index; call before OpenApiValidator.middleware() builds its middlewares. */
export function indexValidatorRoutes(): void {
  if (installed) return;
  const original = validatorsOwnMetadata;
  if (typeof original !== 'function') {
    throw new Error('express-openapi-validator no longer exports applyOpenApiMetadata: update server/http/validator-route-index.ts for the new version, or remove it.');
  }
  metadataModule.applyOpenApiMetadata = (context, responseApiDoc) => indexedMetadata(context, responseApiDoc, original(context, responseApiDoc));
  installed = true;
}

/** The validator's metadata middleware, with its route lookup indexed; `fallback` is the validator's own, for everything but a match. */
export function indexedMetadata(context: OpenApiContext, responseApiDoc: ApiDoc | undefined, fallback: Middleware): Middleware {
  let bySegments: Map<number, IndexedRoute[]> | undefined;
  /** Built on the first request: the app's routing settings are known by then, as the validator reads them per request. */
  const indexOf = (req: Request) => {
    const options = { sensitive: !!req.app.enabled('case sensitive routing'), strict: !!req.app.enabled('strict routing') };
    // Strict routing changes what a trailing `/` does; the index assumes it off (as this app has it) and steps aside otherwise.
    if (options.strict) return undefined;
    const index = new Map<number, IndexedRoute[]>();
    for (const [expressRoute, methods] of Object.entries(context.expressRouteMap)) {
      const compiled = pathToRegexpModule.pathToRegexp(expressRoute, options) as { regexp: RegExp; keys: Array<{ name: string }> };
      // Only plain `/literal/:param` patterns are indexed by their segments; anything else would need the validator's loop.
      if (!/^(\/[^/*?{}()]+)+$/.test(expressRoute)) return undefined;
      const route = {
        expressRoute,
        openApiRoute: methods._openApiRoute,
        pathKey: methods._openApiRoute.substring(methods.basePath.length),
        regexp: compiled.regexp,
        paramNames: compiled.keys.map((key) => key.name),
      };
      const count = segmentsOf(expressRoute);
      const list = index.get(count) ?? [];
      list.push(route);
      index.set(count, list);
    }
    return index;
  };
  let usable = true;
  return (req, res, next) => {
    if (!usable) return fallback(req, res, next);
    bySegments ??= indexOf(req);
    if (!bySegments) {
      usable = false;
      return fallback(req, res, next);
    }
    const path = (context.useRequestUrl ? req.url : req.originalUrl).split('?')[0];
    const fullPath = req.path.startsWith(req.baseUrl) ? req.path : `${req.baseUrl}/${req.path}`;
    if (context.shouldIgnoreRoute(fullPath)) return fallback(req, res, next);
    const method = req.method.toLowerCase();
    for (const route of bySegments.get(segmentsOf(path)) ?? []) {
      const matched = route.regexp.exec(path);
      if (!matched) continue;
      const schema = context.apiDoc.paths[route.pathKey][method];
      // No operation for this method (405), or a parameter that does not decode (400): the validator's own answer.
      if (!schema) return fallback(req, res, next);
      const pathParams: Record<string, string> = {};
      try {
        for (let i = 0; i < route.paramNames.length; i++) pathParams[route.paramNames[i]] = decodeURIComponent(matched[i + 1]);
      } catch {
        return fallback(req, res, next);
      }
      const openapi: Record<string, unknown> = { expressRoute: route.expressRoute, openApiRoute: route.openApiRoute, pathParams, schema, serial: context.serial };
      if (responseApiDoc) openapi._responseSchema = responseApiDoc.paths[route.pathKey][method];
      (req as Request & { openapi: unknown }).openapi = openapi;
      req.params = pathParams;
      return next();
    }
    return fallback(req, res, next);
  };
}
