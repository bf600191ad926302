/**
 * The authorization server's routes, outside the API (they speak OAuth, not
 * this API's JSON and problems):
 *
 * - /.well-known/oauth-authorization-server (RFC 8414) and its OpenID twin,
 *   and /oauth/* (authorize, token, revoke, register, jwks): oidc-provider.
 * - /.well-known/oauth-protected-resource (RFC 9728): the API's metadata,
 *   naming this server as its authorization server.
 * - /oauth/interaction/{uid}: the consent page. A person not signed in is
 *   sent to /signin and back; a signed-in one sees "Allow <app> to" and the
 *   scopes in words, and answers Allow or Deny, a plain form post (no
 *   script) that must come from our own origin (CSRF). On the sandbox, a
 *   request to the page that carries a sandbox token is that token's
 *   account consenting, so a partner's script can run the whole flow, if
 *   the token could give that consent itself (sandboxConsent).
 */
import { escapeHtml } from '../lib/html.ts';
import { Router, urlencoded, type NextFunction, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import type { InteractionDetails } from 'oidc-provider';
import type { Context } from '../context.ts';
import { checkSameOrigin } from '../auth/same-origin.ts';
import { API_METADATA_PATH } from '../http/auth.ts';
import { assetHref } from './page-assets.ts';
import { signedInUser } from './account-pages.ts';
import { provisionSandboxAccount } from '../resources/sandbox/sandbox-service.ts';
import { apiResource, createProvider, errorPage, INTERACTION_PATH, issuerOf } from '../resources/oauth/oauth-provider.ts';
import { appScopes, scopeInWords, scopeWarning } from '../resources/oauth/oauth-scopes.ts';
import { protectedResourceMetadata } from '../resources/oauth/resource-metadata.ts';

type Ports = Pick<Context, 'config' | 'store' | 'secrets' | 'clock' | 'logger' | 'media'>;

/**
 * The resources the request names (RFC 8707 `resource`, which oidc-provider has checked against those this server
 * knows), else the API: an MCP client names the MCP server, every other app gets the API by default.
 */
function requestedResources(details: InteractionDetails, publicUrl: string): string[] {
  const named = details.params.resource;
  const list = (Array.isArray(named) ? named : [named]).filter((value): value is string => typeof value === 'string' && value !== '');
  return list.length ? list : [apiResource(publicUrl)];
}

/** The scopes the request asks for, of those an app may be granted here, in the spec's order. */
function requestedScopes(details: InteractionDetails, grantable: readonly string[]): string[] {
  const asked = new Set(String(details.params.scope ?? '').split(' '));
  return grantable.filter((scope) => asked.has(scope));
}

/**
 * The consent page's policy: nothing but our stylesheet; the form posts to
 * us, and CSP's form-action also governs the redirects that follow the post
 * (CSP3 §6.4.1: "the request's current URL"): ours, then the app's redirect
 * URI, whose origin (or private-use scheme) is allowed, and nothing else.
 */
function consentPolicy(redirectUri: string | undefined): string {
  const target = redirectUri ? URL.parse(redirectUri) : null;
  const app = !target ? '' : target.protocol === 'http:' || target.protocol === 'https:' ? ` ${target.origin}` : ` ${target.protocol}`;
  return ["default-src 'none'", "style-src 'self'", "img-src 'self'", `form-action 'self'${app}`, "base-uri 'none'", "frame-ancestors 'none'"].join('; ');
}

function sendHtml(res: Response, status: number, html: string, csp: string): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'private, no-store');
  res.status(status).type('html').send(html);
}

export function renderConsentPage(options: { basePath: string; uid: string; appName: string; email: string; scopes: string[] }): string {
  const { basePath: b, uid, appName, email, scopes } = options;
  const items = scopes.length
    ? scopes
        .map((scope) => {
          const warning = scopeWarning(scope);
          const warned = warning ? ` <span class="scope-warning" role="note"><strong>Warning:</strong> ${escapeHtml(warning)}</span>` : '';
          return `          <li class="item"><span class="item-text"><strong>${escapeHtml(scopeInWords(scope))}</strong> <span class="meta">${escapeHtml(scope)}</span>${warned}</span></li>`;
        })
        .join('\n')
    : '          <li class="item">Know that you have an account here, and nothing more.</li>';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>Allow ${escapeHtml(appName)}?</title>
    <link rel="icon" href="${b}/favicon.ico" sizes="any">
    <link rel="stylesheet" href="${assetHref(b, 'account.css')}">
  </head>
  <body>
    <main id="consent" class="card">
      <p class="card-brand"><a href="${b}/">Audio Share</a></p>
      <h1>Allow ${escapeHtml(appName)} to:</h1>
      <ul class="items scopes">
${items}
      </ul>
      <p class="lead">For your account ${escapeHtml(email)}. ${escapeHtml(appName)} acts for you until you revoke it in Settings, under Connected apps.</p>
      <form method="post" action="${b}${INTERACTION_PATH}/${encodeURIComponent(uid)}" class="consent-actions">
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      </form>
    </main>
  </body>
</html>
`;
}

export function oauthRoutes(ctx: Ports): Router {
  const router = Router();
  let provider: Promise<Provider> | undefined;
  // Made at the first request: a server on port 0 learns its PUBLIC_URL, the issuer, only once it listens. One that
  // could not be made is made again at the next request.
  const providerOf = () =>
    (provider ??= createProvider(ctx).catch((error: unknown) => {
      provider = undefined;
      throw error;
    }));
  const basePath = () => new URL(ctx.config.publicUrl.replace(/\/+$/, '')).pathname.replace(/\/+$/, '');
  const apiMetadata = (_req: Request, res: Response) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.json(protectedResourceMetadata(ctx.config.publicUrl, '/api/v1', 'Audio Share API', [issuerOf(ctx.config.publicUrl)], appScopes(ctx.config.oauthAllowAdminScope)));
  };
  // RFC 9728 §3.1: the metadata of https://host/api/v1 is at /.well-known/oauth-protected-resource/api/v1; the bare one
  // serves the API too, as the issue names it.
  router.get(['/.well-known/oauth-protected-resource', API_METADATA_PATH], apiMetadata);

  const interaction = `${INTERACTION_PATH}/:uid`;
  router.get(interaction, (req, res, next) => showConsent(req, res).catch(next));
  router.post(interaction, urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }), (req, res, next) => answerConsent(req, res).catch(next));
  router.use(interaction, interactionError);

  // oidc-provider's own routes, handed the request as it came (not under an Express mount, whose prefix it would take
  // for its own): discovery, and everything else under /oauth.
  const DISCOVERY = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
  router.use((req, res, next) => {
    if (DISCOVERY.has(req.path) || req.path.startsWith('/oauth/')) {
      return void providerOf()
        .then((made) => made.callback()(req, res))
        .catch(next);
    }
    next();
  });

  async function showConsent(req: Request, res: Response): Promise<void> {
    const oidc = await providerOf();
    const details = await oidc.interactionDetails(req, res);
    const client = await oidc.Client.find(details.params.client_id);
    if (!client) throw new Error('The app of this authorization was deleted.');
    if (ctx.config.sandbox) {
      const consent = await sandboxConsent(req, requestedScopes(details, appScopes(ctx.config.oauthAllowAdminScope)));
      if (consent && 'refused' in consent) return sendHtml(res, 403, errorPage('forbidden', consent.refused), "default-src 'none'");
      if (consent) return finish(req, res, details, consent.id, true);
    }
    const user = await signedInUser(ctx, req);
    if (!user) {
      // 303: the browser GETs the sign-in page, which comes back here once the person is signed in.
      const next = `${basePath()}${INTERACTION_PATH}/${details.uid}`;
      return void res.redirect(303, `${basePath()}/signin?next=${encodeURIComponent(next)}`);
    }
    const account = await ctx.store.users.get(user.id);
    const html = renderConsentPage({ basePath: basePath(), uid: details.uid, appName: client.clientName ?? client.clientId, email: account?.email ?? '', scopes: requestedScopes(details, appScopes(ctx.config.oauthAllowAdminScope)) });
    sendHtml(res, 200, html, consentPolicy(details.params.redirect_uri));
  }

  async function answerConsent(req: Request, res: Response): Promise<void> {
    const verdict = checkSameOrigin({ 'sec-fetch-site': req.get('sec-fetch-site'), origin: req.get('origin') }, new URL(ctx.config.publicUrl).origin);
    if (!verdict.allowed) return sendHtml(res, 403, errorPage('forbidden', `Your answer was refused because ${verdict.reason}. Answer on this server's own page.`), "default-src 'none'");
    const details = await (await providerOf()).interactionDetails(req, res);
    const user = await signedInUser(ctx, req);
    if (!user) return void res.redirect(303, `${basePath()}/signin?next=${encodeURIComponent(`${basePath()}${INTERACTION_PATH}/${details.uid}`)}`);
    const decision = (req.body as Record<string, unknown> | undefined)?.decision;
    if (decision !== 'allow' && decision !== 'deny') {
      return sendHtml(res, 400, errorPage('invalid_request', 'Answer with the Allow or the Deny button.'), "default-src 'none'");
    }
    await finish(req, res, details, user.id, decision === 'allow');
  }

  /** Tells oidc-provider the answer: who is signed in and what they granted, or that they denied (error=access_denied, with the state). */
  async function finish(req: Request, res: Response, details: InteractionDetails, accountId: string, allow: boolean): Promise<void> {
    const p = await providerOf();
    if (!allow) {
      // RFC 6749 §4.1.2.1: access_denied, "The resource owner or authorization server denied the request."
      return p.interactionFinished(req, res, { error: 'access_denied', error_description: 'The person denied the app access.' }, { mergeWithLastSubmission: false });
    }
    // A grant of the person who is signed in now: one left in the provider's session by someone else is not reused.
    const existing = details.grantId ? await p.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new p.Grant({ accountId, clientId: details.params.client_id });
    const scopes = requestedScopes(details, appScopes(ctx.config.oauthAllowAdminScope));
    if (scopes.length) for (const resource of requestedResources(details, ctx.config.publicUrl)) grant.addResourceScope(resource, scopes.join(' '));
    if (String(details.params.scope ?? '').split(' ').includes('openid')) grant.addOIDCScope('openid');
    const grantId = await grant.save();
    await p.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  /**
   * On the sandbox, the consent of the account of the bearer token sent to the consent page, if one is sent: the token
   * must be able to give it, as a person must. It works (not revoked or expired, its account not disabled), it is a
   * person's token and not an app's access token (an app does not let apps in), and it holds every scope the app asks
   * for: a token lets an app do only what it may do itself, as a token cannot mint a token with more (POST /me/tokens
   * needs a session). A token the sandbox has not seen gets its account, with every scope.
   */
  async function sandboxConsent(req: Request, scopes: string[]): Promise<{ id: string } | { refused: string } | undefined> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!token) return undefined;
    const holder = await ctx.store.tokens.findHolder(token);
    if (!holder) {
      const made = await provisionSandboxAccount(ctx, token);
      return made ?? { refused: 'The bearer token sent to this page is revoked, so it cannot consent. Send a token that works, or none and sign in.' };
    }
    if (holder.timeExpires !== null && holder.timeExpires <= ctx.clock.now()) {
      return { refused: `The bearer token sent to this page expired at ${new Date(holder.timeExpires).toISOString()}, so it cannot consent. Send a token that works.` };
    }
    if (holder.disabled) return { refused: "The account of the bearer token sent to this page is disabled. Ask the server's administrator." };
    if (holder.audience) return { refused: "The bearer token sent to this page is an app's access token: an app cannot let another app in. Send the account's own sandbox token." };
    const missing = holder.scopes === null ? [] : scopes.filter((scope) => !holder.scopes!.includes(scope));
    if (missing.length) {
      return { refused: `The bearer token sent to this page does not hold ${missing.join(', ')}, which the app asks for, and a token lets an app do only what it may do itself. Send a token that holds every scope asked for, or ask for fewer.` };
    }
    return holder.user;
  }

  function interactionError(error: unknown, _req: Request, res: Response, next: NextFunction): void {
    const name = (error as { name?: string }).name;
    // oidc-provider's SessionNotFound: no interaction cookie, or an interaction that expired or was answered already.
    if (!res.headersSent && (name === 'SessionNotFound' || name === 'InvalidRequest')) {
      sendHtml(res, 400, errorPage('expired', 'This request for access has expired or was answered already. Go back to the app and start again.'), "default-src 'none'");
    } else {
      next(error);
    }
  }

  return router;
}
