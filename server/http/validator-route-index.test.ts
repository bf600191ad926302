import type { AddressInfo } from 'node:net';
import express, { type Request } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { describe, expect, it } from 'vitest';
import { specPath } from '../app.ts';
import { memoiseRouteRegexps } from './route-regexp-cache.ts';
import { indexValidatorRoutes, indexedMetadata, metadataModule, validatorsOwnMetadata } from './validator-route-index.ts';

type Context = Parameters<typeof indexedMetadata>[0];
type ResponseDoc = Parameters<typeof indexedMetadata>[1];

/** The validator's OpenApiContext for our spec, as the validator builds it (on its first request), caught on its way to the metadata middleware. */
async function validatorContext(): Promise<{ context: Context; responseDoc: ResponseDoc }> {
  memoiseRouteRegexps();
  indexValidatorRoutes();
  const installed = metadataModule.applyOpenApiMetadata;
  let caught: { context: Context; responseDoc: ResponseDoc } | undefined;
  metadataModule.applyOpenApiMetadata = (context, responseDoc) => {
    caught = { context, responseDoc };
    return installed(context, responseDoc);
  };
  try {
    const app = express();
    app.use(OpenApiValidator.middleware({ apiSpec: specPath, validateRequests: true, validateResponses: true, validateSecurity: false, fileUploader: false }));
    app.use((_req, res) => res.json({}));
    app.use((_error: unknown, _req: Request, res: express.Response, _next: express.NextFunction) => res.status(500).end());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/me`);
    server.close();
  } finally {
    metadataModule.applyOpenApiMetadata = installed;
  }
  if (!caught) throw new Error('The validator never made its metadata middleware.');
  return caught;
}

/** What a metadata middleware does with a request: an error it throws or passes on, or what it sets. */
function outcome(middleware: ReturnType<typeof validatorsOwnMetadata>, method: string, url: string) {
  const path = url.split('?')[0];
  const req = { method, url, originalUrl: url, path, baseUrl: '', params: {}, app: { enabled: () => false } } as unknown as Request & { openapi?: unknown };
  try {
    let passed: unknown = 'not called';
    middleware(req, {} as express.Response, (error?: unknown) => (passed = error));
    if (passed !== undefined) return { passed: passed === 'not called' ? passed : { status: (passed as { status?: number }).status } };
  } catch (error) {
    return { thrown: (error as { status?: number }).status, message: (error as Error).message };
  }
  return { openapi: req.openapi, params: req.params };
}

describe('the indexed route lookup of the validator', () => {
  it('finds, for every documented route and for paths near them, exactly what the validator finds', async () => {
    const { context, responseDoc } = await validatorContext();
    const own = validatorsOwnMetadata(context, responseDoc);
    // The fallbacks are counted: a match must be found by the index itself, not handed back to the validator.
    let fellBack = 0;
    const indexedWithFallback = indexedMetadata(context, responseDoc, (req, res, next) => {
      fellBack++;
      own(req, res, next);
    });
    const routes = Object.keys(context.expressRouteMap);
    expect(routes.length).toBeGreaterThan(50);
    const urls = routes.flatMap((route) => {
      const sample = route.replace(/:[A-Za-z0-9_]+/g, 'abc_123');
      return [
        sample,
        `${sample}/`,
        sample.toUpperCase(),
        route.replace(/:[A-Za-z0-9_]+/g, '%41bc'),
        route.replace(/:[A-Za-z0-9_]+/g, '%E0%A4%A'),
        `${sample}/extra`,
        `${sample}?limit=5`,
        sample.replace(/\/[^/]+$/, ''),
      ];
    });
    urls.push('/api/v1/nothing-here', '/api/v1', '/api/v1/', '/elsewhere', '//api//v1', '/api/v1/players//');
    let matched = 0;
    for (const url of urls) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']) {
        const fallbacksBefore = fellBack;
        const expected = outcome(own, method, url);
        expect(outcome(indexedWithFallback, method, url), `${method} ${url}`).toEqual(expected);
        if ('openapi' in expected && expected.openapi) {
          matched++;
          expect(fellBack, `${method} ${url} was found by the index`).toBe(fallbacksBefore);
        }
      }
    }
    // Every documented operation was found at least once, with its parameters decoded.
    expect(matched).toBeGreaterThan(routes.length);
    expect(outcome(indexedWithFallback, 'GET', '/api/v1/players/%41bc')).toMatchObject({ params: { playerid: 'Abc' } });
  });
});
