/**
 * express-openapi-validator, fed the request path's one match. The
 * validator (5.x) finds a request's operation by its own loop over every
 * documented route (dist/middlewares/openapi.metadata.js, lookupRoute),
 * case-insensitively unless the app says otherwise, and sets `req.openapi`
 * for its validators. That was the third match of every request, and one
 * that could disagree with the others (issue 28: `/api/v1/Me/tokens` was
 * validated as createToken while authentication knew no such path).
 *
 * This replaces the validator's metadata middleware with one that sets
 * `req.openapi` from `req.operation` (http/route.ts), which has already
 * matched the request, case-sensitively, or refused it. The validator keeps
 * doing what it is for: checking parameters and bodies against the spec.
 *
 * It reaches into the validator's files, pinned to an exact version in
 * package.json; validator-match.test.ts fails when an upgrade changes what
 * this relies on (the module's export, and what its validators read of
 * `req.openapi`).
 */
import { createRequire } from 'node:module';
import type { NextFunction, Request, Response } from 'express';

const require = createRequire(import.meta.url);

/** The validator's file that makes its metadata middleware. */
export const validatorMetadataFile = require.resolve('express-openapi-validator/dist/middlewares/openapi.metadata.js');

type Middleware = (req: Request, res: Response, next: NextFunction) => void;
type ApiDoc = { paths: Record<string, Record<string, unknown>> };
/** What this reads of the validator's OpenApiContext (framework/openapi.context.js). */
export interface OpenApiContext {
  expressRouteMap: Record<string, { basePath: string; _openApiRoute: string }>;
  apiDoc: ApiDoc;
  serial: number;
}
type MakeMetadataMiddleware = (context: OpenApiContext, responseApiDoc?: ApiDoc) => Middleware;

/** The validator's module whose export it calls (through the module object) to make its metadata middleware. */
export const metadataModule = require(validatorMetadataFile) as { applyOpenApiMetadata: MakeMetadataMiddleware };

let installed = false;

/** Installs the adapter; call before OpenApiValidator.middleware() builds its middlewares. */
export function feedValidatorTheMatch(): void {
  if (installed) return;
  if (typeof metadataModule.applyOpenApiMetadata !== 'function') {
    throw new Error('express-openapi-validator no longer exports applyOpenApiMetadata: update server/http/validator-match.ts for the new version.');
  }
  metadataModule.applyOpenApiMetadata = matchedMetadata;
  installed = true;
}

/** The metadata middleware: `req.openapi` from the match, as the validator's own would set it for the same operation. */
export function matchedMetadata(context: OpenApiContext, responseApiDoc?: ApiDoc): Middleware {
  // The validator's names of each spec path: its Express route (`/api/v1/players/:playerid`) and its OpenAPI one.
  const routes = new Map<string, { expressRoute: string; openApiRoute: string }>();
  for (const [expressRoute, methods] of Object.entries(context.expressRouteMap)) {
    routes.set(methods._openApiRoute.substring(methods.basePath.length), { expressRoute, openApiRoute: methods._openApiRoute });
  }
  return (req, _res, next) => {
    const operation = req.operation;
    const route = operation && routes.get(operation.path);
    // Unreachable while route.ts runs first and the table and the bundle are made from one spec; a bug if not.
    if (!operation || !route) return next(new Error(`${req.method} ${req.path} reached the validator without a matched operation of the bundled spec`));
    const method = operation.method.toLowerCase();
    const openapi: Record<string, unknown> = {
      expressRoute: route.expressRoute,
      openApiRoute: route.openApiRoute,
      pathParams: req.pathParams ?? {},
      schema: context.apiDoc.paths[operation.path][method],
      serial: context.serial,
    };
    if (responseApiDoc) openapi._responseSchema = responseApiDoc.paths[operation.path][method];
    (req as Request & { openapi: unknown }).openapi = openapi;
    req.params = req.pathParams ?? {};
    next();
  };
}
