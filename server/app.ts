/**
 * The HTTP application: request ids and logs, security headers, CORS, the
 * docs site, the player pages, and the API under /api/v1, where every request
 * (and, when configured, every response) is validated against
 * generated/openapi.json.
 *
 * The order is the point: cheap refusals come first. A NUL in the URL and
 * the per-address rate limit are checked before any route or token lookup;
 * in the API the bearer token is checked before the body is read, and the
 * per-user rate limit before the body is parsed.
 */
import { provisionSandboxAccount } from './resources/sandbox/sandbox-service.ts';
import { sandboxHandlers } from './resources/sandbox/sandbox-handlers.ts';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import express, { type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Context } from './context.ts';
import { requestContext } from './http/request-context.ts';
import { cors } from './http/cors.ts';
import { apiMetadataUrl, authenticate } from './http/auth.ts';
import { rateLimitByAddress, rateLimitByUser } from './http/rate-limit.ts';
import { idempotency } from './http/idempotency.ts';
import { IdempotencyKeys } from './http/idempotency-keys.ts';
import { deprecationHeaders } from './http/deprecation.ts';
import { securityHeaders } from './http/security-headers.ts';
import { servedChangelog, servedDocsPage, servedSpec } from './http/served-docs.ts';
import { refuseNulInUrl } from './http/nul-characters.ts';
import { jsonBody } from './http/json-body.ts';
import { notFound } from './lib/problems.ts';
import { problemHandler } from './http/errors.ts';
import { feedValidatorTheMatch } from './http/validator-match.ts';
import { requestValidatorsOf, validateRequests } from './http/validation/request-validator.ts';
import { routeOperations } from './http/route.ts';
import { readinessHandler } from './http/readiness.ts';
import { mailLinksHandlers } from './resources/mail-links/mail-links-handlers.ts';
import { dispatchOperations } from './http/operations.ts';
import { accountHandlers } from './resources/account/account-handlers.ts';
import { projectsHandlers } from './resources/projects/projects-handlers.ts';
import { boxesHandlers } from './resources/boxes/boxes-handlers.ts';
import { uploadsHandlers } from './resources/uploads/uploads-handlers.ts';
import { downloadsHandlers, downloadSafetyHeaders } from './resources/downloads/downloads-handlers.ts';
import { playersHandlers } from './resources/players/players-handlers.ts';
import { listeningHandlers } from './resources/listening/listening-handlers.ts';
import { insightsHandlers } from './resources/insights/insights-handlers.ts';
import { commentsHandlers } from './resources/comments/comments-handlers.ts';
import { webhooksHandlers } from './resources/webhooks/webhooks-handlers.ts';
import { paymentsHandlers } from './resources/payments/payments-handlers.ts';
import { playerPageRoutes } from './pages/page-routes.ts';
import { accountPageRoutes } from './pages/account-pages.ts';
import { studioPageRoutes } from './pages/studio-pages.ts';
import { portalHandlers } from './resources/portal/portal-handlers.ts';
import { projectUploadsHandlers } from './resources/project-uploads/project-uploads-handlers.ts';
import { passkeysHandlers } from './resources/passkeys/passkeys-handlers.ts';
import { accountSecurityHandlers } from './resources/account/security-handlers.ts';
import { adminHandlers } from './resources/admin/admin-handlers.ts';
import { sessionsHandlers } from './resources/sessions/sessions-handlers.ts';
import { notificationsHandlers } from './resources/notifications/notifications-handlers.ts';
import { oidcRoutes } from './resources/sso/oidc-routes.ts';
import { oauthRoutes } from './pages/oauth-pages.ts';
import { oauthHandlers } from './resources/oauth/oauth-handlers.ts';
import { apiResource, mcpResource } from './resources/oauth/oauth-provider.ts';
import { mcpRoutes } from './resources/mcp/mcp-routes.ts';
import { isRelayed } from './http/internal-relay.ts';
import { oneLayer } from './http/one-layer.ts';

const root = resolve(import.meta.dirname, '..');
export const specPath = resolve(root, 'generated/openapi.json');
export const docsPath = resolve(root, 'generated/docs.html');
export const changelogPath = resolve(root, 'generated/changelog.html');
/** Made once from web/assets/icon.svg by scripts/make-favicon.ts, and committed. */
const faviconPath = resolve(root, 'web/assets/favicon.ico');

/** What the app needs to know of the process that serves it. */
export interface Lifecycle {
  /** True once a shutdown began: /readyz then answers 503, so that a load balancer sends nothing new. */
  isDraining(): boolean;
}

export function createApp(ctx: Context, lifecycle: Lifecycle = { isDraining: () => false }): Express {
  const app = express();
  app.disable('x-powered-by');
  // RFC 3986 §6.2.2.1: the path is case-sensitive. The API matches its own (http/route.ts); the pages' routes follow suit.
  app.set('case sensitive routing', true);
  // JSON answers change with every write; a weak ETag over each body would cost a hash per request for nothing.
  app.set('etag', false);
  // Whose X-Forwarded-For to believe for req.ip, which the per-address rate limit counts by (TRUST_PROXY).
  app.set('trust proxy', ctx.config.trustProxy);
  // One layer each for what every request passes (http/one-layer.ts: each layer of Express costs every request, issue 32).
  app.use(oneLayer(requestContext(ctx.logger), securityHeaders(ctx.config)));
  // The signed downloads' own CSP (sandbox) and CORP (cross-origin, for <audio> on other sites), also on answers made
  // before their handler: a refused signature, a rate limit.
  app.use('/api/v1/download', downloadSafetyHeaders);
  app.use(oneLayer(cors, refuseNulInUrl));

  // Before the rate limit: a supervisor's health and readiness checks must not use up, or be refused by, a client's allowance.
  app.get('/healthz', async (_req, res) => {
    await ctx.store.ping();
    res.json({ status: 'ok', store: ctx.store.db.dialect });
  });
  app.get(
    '/readyz',
    readinessHandler({
      pingDatabase: () => ctx.store.ping(),
      checkBlobStore: (timeoutMs) => ctx.blobs.check(timeoutMs),
      isDraining: lifecycle.isDraining,
      onFailure: (check, error) => ctx.logger.warn(`readiness check failed: ${check}`, { err: error }),
    }),
  );
  // A limit that is off (RATE_LIMIT=0) is no layer at all, rather than one that passes every request on (issue 32: each
  // layer of Express costs every request).
  if (ctx.config.addressRateLimit.perSecond !== 0) {
    const byAddress = rateLimitByAddress(ctx.store.db, ctx.config.addressRateLimit);
    // The MCP server's tool calls, relayed to the API by this process, were counted when they reached /mcp.
    app.use((req, res, next) => (isRelayed(req) ? next() : byAddress(req, res, next)));
  }
  // The API before the pages, docs and OAuth routes: none of them is under /api/v1, and an API request (the most
  // frequent kind) then passes none of their route patterns (issue 23).
  const dispatch = dispatchOperations(
    [accountHandlers(ctx), projectsHandlers(ctx), boxesHandlers(ctx), uploadsHandlers(ctx), downloadsHandlers(ctx), playersHandlers(ctx), listeningHandlers(ctx), insightsHandlers(ctx), commentsHandlers(ctx), sandboxHandlers(ctx), webhooksHandlers(ctx), paymentsHandlers(ctx), sessionsHandlers(ctx), passkeysHandlers(ctx), mailLinksHandlers(ctx), accountSecurityHandlers(ctx), adminHandlers(ctx), notificationsHandlers(ctx), oauthHandlers(ctx)],
    [portalHandlers(ctx), projectUploadsHandlers(ctx)],
  );
  const api = express.Router({ caseSensitive: true, strict: true });
  // Every request with an OAuth access token compares its audience with this: made again only when PUBLIC_URL changes
  // (once, on a server that learns its port when it listens), not per request.
  let apiResourceFor: { publicUrl?: string; resource: string } = { resource: '' };
  const apiResourceOf = (publicUrl: string) => (apiResourceFor.publicUrl === publicUrl ? apiResourceFor : (apiResourceFor = { publicUrl, resource: apiResource(publicUrl) })).resource;
  const credentials = authenticate(
    {
      tokens: ctx.store.tokens,
      sessions: {
        findActive: (secret, now) => ctx.store.sessions.findActive(secret, now, ctx.config.sessions),
        touch: (id, now) => ctx.store.sessions.touch(id, now),
      },
    },
    {
      accountOfUnknownToken: (token) => provisionSandboxAccount(ctx, token),
      ...(ctx.config.sandbox ? { howToGetOne: 'This is a sandbox: any token works, such as "Bearer my-sandbox-token".' } : {}),
      publicOrigin: () => new URL(ctx.config.publicUrl).origin,
      now: () => ctx.clock.now(),
      onBookkeepingError: (error) => ctx.logger.warn('recording a credential\'s last use failed', { err: error }),
      // OAuth access tokens issued for another resource of this server are not taken by the API; the MCP server's are,
      // on the tool calls it relays here (http/internal-relay.ts).
      resource: (req) => (isRelayed(req) ? mcpResource(ctx.config.publicUrl) : apiResourceOf(ctx.config.publicUrl)),
      // RFC 9728 §5.1: "the resource_metadata parameter" in every challenge, so that an OAuth client that meets a 401
      // finds the authorization server (oauth-routes.ts serves the document).
      resourceMetadata: () => apiMetadataUrl(ctx.config.publicUrl),
    },
  );
  // The one match of the request to its operation (generated/operations.ts), before anything else of the API: a request
  // that matches none is answered 404 (or 405) here, before any credential is looked at. Then the credential, then the
  // per-user limit: in this order, in one layer of Express (http/one-layer.ts).
  api.use(oneLayer(routeOperations(), credentials, ...(ctx.config.rateLimit.perSecond !== 0 ? [rateLimitByUser(ctx.store.db, ctx.config.rateLimit)] : [])));
  api.use(
    oneLayer(
      // The tus operations (the portals' and project members'): after the credential check (the portal's take none), before the body parser
      // and the validator (PATCH bodies stream unparsed; tus checks its own headers).
      dispatch.raw,
      jsonBody(),
      // Deprecation and Sunset for what the spec deprecates, before the validator: its refusals carry them too.
      deprecationHeaders(),
      // Every request against its operation's validators, compiled from the spec (http/validation): parameters, headers
      // and body, refused with every fault at once.
      validateRequests(requestValidatorsOf(specPath)),
    ),
  );
  // Responses, where configured (the tests), by express-openapi-validator, the reference the request validators are
  // held to (http/validation/difference.test.ts), fed the one match. A response that breaks the spec is our bug.
  if (ctx.config.validateResponses) {
    feedValidatorTheMatch();
    api.use(
      OpenApiValidator.middleware({
        apiSpec: specPath,
        validateRequests: false,
        validateResponses: { onError: responseViolation(ctx) },
        validateSecurity: false,
        fileUploader: false,
      }),
    );
  }
  // After the validator (a request it refuses claims no key), before the handlers: a retry gets the first answer.
  api.use(oneLayer(idempotency({ keys: new IdempotencyKeys(ctx.store.db, ctx.secrets), now: () => ctx.clock.now(), logger: ctx.logger }), dispatch.typed));
  app.use('/api/v1', api);
  const docsPage = servedDocsPage(docsPath, ctx.config);
  app.get(['/docs', '/docs/'], (req, res, next) => {
    if (!existsSync(docsPath)) return next(notFound('The docs site has not been built. Run npm run generate.'));
    docsPage(req, res, next);
  });
  const changelogPage = servedChangelog(changelogPath, ctx.config);
  app.get('/docs/changelog', (req, res, next) => {
    if (!existsSync(changelogPath)) return next(notFound('The changelog has not been built. Run npm run generate.'));
    changelogPage(req, res, next);
  });
  // Browsers ask every origin for /favicon.ico by themselves. Its URL carries no version, so it is kept
  // for 30 days, not for ever: a changed icon reaches browsers within that.
  app.get('/favicon.ico', (_req, res) => res.sendFile(faviconPath, { maxAge: '30d' }));
  app.get('/openapi.json', servedSpec(specPath, ctx.config));
  // Problem `type` URIs (/problems/<slug>) resolve to the table of problem types in the docs.
  app.get('/problems/:slug', (_req, res) => res.redirect(302, '/docs#/section/errors'));
  app.use(playerPageRoutes(ctx));
  app.use(accountPageRoutes(ctx));
  app.use(studioPageRoutes(ctx));
  // Single sign-on's start and callback: navigations of the browser to and from the OpenID provider, not API calls.
  app.use(oidcRoutes(ctx));
  // The OAuth authorization server (oidc-provider) for partners' apps, its consent page, and the API's RFC 9728 metadata.
  app.use(oauthRoutes(ctx));
  // The MCP server for AI assistants (not an OpenAPI operation: JSON-RPC over Streamable HTTP), and its RFC 9728 metadata.
  app.use(mcpRoutes(ctx));


  app.use((req, _res, next) => next(notFound(`There is nothing at ${req.method} ${req.path}. The API is under /api/v1; see /docs.`)));
  app.use(problemHandler());
  return app;
}

/** A response that breaks the spec is our bug: log it loudly and answer 500. */
function responseViolation(ctx: Context) {
  return (error: Error, body: unknown, req: express.Request) => {
    ctx.logger.error('response breaks the spec', { requestId: req.id, path: req.originalUrl.split('?')[0], err: error, body: JSON.stringify(body)?.slice(0, 2000) });
    throw error;
  };
}
