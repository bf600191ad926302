/**
 * The OAuth 2.1 authorization server: oidc-provider (certified, maintained),
 * configured to the issue's rules, never a hand-written one.
 *
 * - Only the authorization code grant, with PKCE S256, for every client:
 *   no implicit grant (response type `code` only), no password grant (which
 *   oidc-provider does not implement), no `plain` (which it does not take).
 * - Access tokens are opaque, live an hour, and are issued for one resource
 *   (RFC 8707): the API, `<PUBLIC_URL>/api/v1` (the default), or the MCP
 *   server, `<PUBLIC_URL>/mcp`, for a client that asks for it with the
 *   `resource` parameter, as the MCP authorization spec has its clients do.
 * - Every code exchange gives a refresh token, without `offline_access`;
 *   refresh tokens rotate on every use, and a used one presented again
 *   revokes the whole grant (oidc-provider's rotateRefreshToken: true, RFC
 *   9700 §4.14.2).
 * - Its records are in our store (oauth-adapter.ts), and its keys (cookie
 *   keys, the ID token's signing key) are derived from the server's signing
 *   secret, so every process behind a load balancer shares them.
 * - Every authorization asks the person (the consent page, oauth-routes.ts),
 *   which also says who is signed in: the provider's own session never
 *   decides alone whose account an app gets.
 */
import { escapeHtml } from '../../lib/html.ts';
import { createPrivateKey } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Context } from '../../context.ts';
import { derivedKey } from '../../signing/derived-keys.ts';
import { storeAdapter } from './oauth-adapter.ts';
import { appStore, newAppId, newAppSecret, redirectUriProblems } from './oauth-apps.ts';
import { appScopes } from './oauth-scopes.ts';

type Ports = Pick<Context, 'config' | 'store' | 'secrets' | 'clock' | 'logger'>;

/** How long things live, in seconds. */
export const TTL = {
  /** The issue: "access tokens live an hour". */
  AccessToken: 60 * 60,
  /** RFC 6749 §4.1.2: "A maximum authorization code lifetime of 10 minutes is RECOMMENDED"; one is plenty. */
  AuthorizationCode: 60,
  /** A refresh token not used for 30 days ends; each use gives a new one with 30 more. */
  RefreshToken: 30 * 24 * 60 * 60,
  /** A grant outlives its refresh tokens: it ends when revoked, or a year after it was last renewed. */
  Grant: 365 * 24 * 60 * 60,
  /** The consent page may be left open for an hour. */
  Interaction: 60 * 60,
  Session: 14 * 24 * 60 * 60,
  IdToken: 60 * 60,
} as const;

/**
 * Ends a grant oidc-provider destroyed: its record, its access tokens' rows, and the webhooks the app made under it
 * (with their pending deliveries, ON DELETE CASCADE), all in one transaction, so that once it commits nothing of the
 * account is delivered to the app (issue 28). oidc-provider destroys a grant when a refresh token of it is revoked
 * (RFC 7009) or presented again after its rotation, or a code is reused; revoking an access token alone ends the
 * grant's tokens but not the grant (its revokeGrantPolicy), which the person can still revoke as a connected app.
 */
async function endGrant(ctx: Pick<Context, 'store'>, grantId: string, now: number): Promise<void> {
  await ctx.store.transaction(async (store) => {
    await store.oauth.destroyRecord('Grant', grantId);
    await store.oauth.revokeAccessTokensOfGrant(grantId, now);
    await store.webhooks.deleteOfGrants([grantId]);
  });
}

/** The API's resource identifier (RFC 8707, RFC 9728 `resource`): its URL. */
export const apiResource = (publicUrl: string) => `${publicUrl.replace(/\/+$/, '')}/api/v1`;

/** The MCP server's resource identifier: its URL, which MCP clients name as `resource` (RFC 8707) when they ask for a token. */
export const mcpResource = (publicUrl: string) => `${publicUrl.replace(/\/+$/, '')}/mcp`;

/** The resources this server issues tokens for. */
export const resourcesOf = (publicUrl: string) => [apiResource(publicUrl), mcpResource(publicUrl)];

/** The issuer: PUBLIC_URL's origin (RFC 8414 §2: "a URL that uses the "https" scheme and has no query or fragment components"). */
export const issuerOf = (publicUrl: string) => new URL(publicUrl).origin;

/**
 * The ID token's signing key (only a client that asks for `openid` gets an
 * ID token): Ed25519, whose private key is any 32 bytes, here derived from
 * the signing secret, so every process signs with the same key and a
 * restart keeps it. Node's crypto builds the key from the RFC 8410 PKCS #8
 * encoding of that seed.
 */
export function signingJwk(secret: Buffer): Record<string, unknown> {
  const seed = derivedKey(secret, 'audio-share oauth id-token key v1');
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  return { ...key.export({ format: 'jwk' }), kid: 'ed25519-1', use: 'sig', alg: 'EdDSA' };
}

/** oidc-provider's routes, all under /oauth (the spec's authorizationUrl and tokenUrl); discovery stays at /.well-known. */
const ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  registration: '/oauth/register',
  jwks: '/oauth/jwks',
  end_session: '/oauth/logout',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
};

export const INTERACTION_PATH = '/oauth/interaction';

/**
 * oidc-provider (with koa and jose, about 180 modules) is loaded here, at the
 * first OAuth request, not at start: a server no partner app uses never pays
 * its memory.
 */
export async function createProvider(ctx: Ports): Promise<Provider> {
  const { default: Provider, errors, interactionPolicy } = await import('oidc-provider');
  const { publicUrl } = ctx.config;
  const resource = apiResource(publicUrl);
  // What an app may be granted: every scope but `admin`, unless the operator allows it (OAUTH_ALLOW_ADMIN_SCOPE).
  const grantable = appScopes(ctx.config.oauthAllowAdminScope);

  const policy = interactionPolicy.base();
  // Every authorization is the person's to answer, each time, on our consent page (which also establishes who is signed in).
  policy.get('consent')!.checks.add(
    new interactionPolicy.Check('always_ask', 'the person answers every authorization', (koa: KoaContextWithOIDC) =>
      koa.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
    ),
  );

  const configuration: Configuration = {
    adapter: storeAdapter({ oauth: () => ctx.store.oauth, apps: appStore(ctx), endGrant: (grantId, now) => endGrant(ctx, grantId, now), now: Date.now }),
    async findAccount(_koa, sub) {
      const user = await ctx.store.users.get(sub);
      if (!user || user.disabled) return undefined;
      return { accountId: sub, claims: () => ({ sub }) };
    },
    jwks: { keys: [signingJwk(ctx.config.signingSecret)] },
    cookies: {
      keys: [derivedKey(ctx.config.signingSecret, 'audio-share oauth cookies v1').toString('base64url')],
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    claims: { openid: ['sub'] },
    scopes: ['openid'],
    // RFC 7591 §2's `scope`, which MCP clients send when they register (the resource metadata's scopes_supported):
    // oidc-provider would check it against its OpenID scopes only, and refuse the API's. Those of this server are taken,
    // and the value is then dropped, as §3.2.1 lets a server do ("The authorization server MAY reject or replace any of
    // the client's requested metadata values"): what an app gets is what the person allows on the consent page.
    extraClientMetadata: {
      properties: ['scope'],
      // Run once for every client, registered now or read from the store, whatever its metadata holds.
      validator(_koa: unknown, key: string, value: unknown, metadata: Record<string, unknown>) {
        if (key !== 'scope') return;
        // A registered app's redirect URIs follow the rules of POST /apps (oauth-apps.ts), public (`none`) or not. RFC 7591
        // §3.2.2: invalid_redirect_uri, "The value of one or more redirection URIs is invalid."
        const uris = metadata.redirect_uris;
        if (Array.isArray(uris) && uris.every((uri) => typeof uri === 'string')) {
          const problems = redirectUriProblems(uris, metadata.token_endpoint_auth_method === 'none' ? 'public' : 'confidential');
          if (problems.length) {
            throw Object.assign(new errors.InvalidRedirectUri(), { error_description: `Some redirect URIs cannot be used: ${problems.map((problem) => problem.detail).join(' ')}` });
          }
        }
        if (value === undefined) return;
        const unknown = unknownScopes(value, grantable);
        if (unknown.length) throw new errors.InvalidClientMetadata(`scope names what an app cannot have here: ${unknown.join(', ')}. ${whyNot(unknown, grantable)}`);
        delete metadata.scope;
      },
    },
    extraParams: {
      // Run for every authorization request, once the app and its redirect URI are known good, so that a refusal goes
      // back to the app with its state. RFC 6749 §4.1.2.1: invalid_scope, "The requested scope is invalid, unknown, or
      // malformed." A scope this server does not have is refused here, before the consent page, not dropped there (the
      // grant then lacked it, and the request ended as access_denied).
      scope(koa: KoaContextWithOIDC, value: unknown) {
        const unknown = unknownScopes(value, grantable);
        if (unknown.length) {
          throw new errors.InvalidScope(whyNot(unknown, grantable), unknown.join(' '));
        }
        // offline_access (OpenID Connect Core §11) is taken and dropped: every code exchange gives a refresh token here.
        const asked = String(value ?? '').split(' ').filter((scope) => scope !== '' && scope !== 'offline_access');
        if (koa.oidc.params) koa.oidc.params.scope = asked.length ? asked.join(' ') : undefined;
      },
    },
    responseTypes: ['code'],
    // PKCE (RFC 7636) for every client, public or confidential, as OAuth 2.1 requires of the authorization code grant.
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'EdDSA',
    },
    enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
    routes: ROUTES,
    interactions: { url: (_koa: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`, policy },
    features: {
      devInteractions: { enabled: false },
      // RFC 7009.
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // Sender-constrained tokens are not checked by the API (it takes bearer tokens), so none are issued.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // RFC 7591, only where the operator turned it on (OAUTH_DYNAMIC_REGISTRATION=true): anyone may then register.
      registration: { enabled: ctx.config.oauthDynamicRegistration, initialAccessToken: false, idFactory: newAppId, secretFactory: async () => newAppSecret() },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_koa: unknown, _client: unknown, oneOf?: string[]) => oneOf ?? resource,
        // The one resource granted is the one tokens are for, without the client naming it at the token endpoint.
        useGrantedResource: async () => true,
        async getResourceServerInfo(_koa: unknown, indicator: string) {
          // The MCP authorization spec: "MCP clients MUST include the resource parameter in both authorization requests
          // and token requests", naming the MCP server; its tokens have that audience, and the API refuses them.
          const known = resourcesOf(publicUrl);
          if (!known.includes(indicator)) throw new errors.InvalidTarget(`This server issues tokens for ${known.join(' and ')}; not for ${indicator}.`);
          return { scope: grantable.join(' '), audience: indicator, accessTokenTTL: TTL.AccessToken, accessTokenFormat: 'opaque' };
        },
      },
    },
    // The issue: "Every code exchange also gives a refresh token, with no extra scope to ask for (offline_access is not needed)."
    issueRefreshToken: async (_koa: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    // RFC 9700 §4.14.2 (refresh token rotation): a used refresh token presented again means two parties hold it, one of
    // them an attacker, so the whole grant is revoked; oidc-provider does that when a consumed refresh token comes back.
    // Always rotated; asked just before the token is spent, this also refuses a `resource` the grant lacks while the
    // token is still unspent: RFC 8707 §2.2, invalid_target, "The requested resource is invalid, missing, unknown, or
    // malformed". (oidc-provider would refuse it only after spending the token, so that the app's next, right refresh
    // looked like a reuse and ended the grant.)
    rotateRefreshToken: async (koa: KoaContextWithOIDC) => {
      const named = koa.oidc.params?.resource;
      if (named === undefined) return true;
      const asked = Array.isArray(named) ? named : [named];
      const token = koa.oidc.entities?.RefreshToken as { resourceIndicators: Set<string> } | undefined;
      const granted = [...(token?.resourceIndicators ?? [])].filter((resource): resource is string => typeof resource === 'string');
      if (asked.length !== 1) throw new errors.InvalidTarget(`Name one resource for a refresh, or none for this grant's own: ${granted.join(' ')}.`);
      if (!granted.includes(String(asked[0]))) {
        throw new errors.InvalidTarget(`This grant is for ${granted.join(' and ')}, not for ${String(asked[0])}: refresh without resource, or ask the person again with resource=${String(asked[0])}.`);
      }
      return true;
    },
    // Refresh tokens belong to the grant, not to the provider's browser session (which only remembers who signed in).
    expiresWithSession: async () => false,
    ttl: TTL,
    renderError: async (koa: KoaContextWithOIDC, out: { error: string; error_description?: string }) => {
      koa.type = 'html';
      koa.body = errorPage(out.error, out.error_description);
    },
  };
  const provider = new Provider(issuerOf(publicUrl), configuration);
  // Behind a TLS-terminating proxy the endpoints' URLs must say https: the same trust as Express's (TRUST_PROXY).
  provider.proxy = Boolean(ctx.config.trustProxy);
  // scopes_supported: the API's scopes (RFC 8414 §2), which oidc-provider, knowing them as a resource's, leaves out.
  provider.use(async (koa, next) => {
    await next();
    if (koa.oidc?.route === 'discovery' && koa.body && typeof koa.body === 'object') {
      (koa.body as Record<string, unknown>).scopes_supported = [...grantable];
    }
  });
  provider.on('server_error', (_koa, error) => ctx.logger.error('the OAuth authorization server failed', { err: error }));
  return provider;
}


/** The scopes of a space-separated list that no app may be granted here (its own, and OpenID's openid and offline_access). */
function unknownScopes(value: unknown, grantable: readonly string[]): string[] {
  const known = new Set<string>([...grantable, 'openid', 'offline_access']);
  return String(value ?? '').split(' ').filter((scope) => scope !== '' && !known.has(scope));
}

/** Why an app may not have `unknown`: admin is held back by the operator's choice; anything else does not exist here. */
function whyNot(unknown: string[], grantable: readonly string[]): string {
  const admin = unknown.includes('admin') ? 'This server does not let apps administer it (its operator has not set OAUTH_ALLOW_ADMIN_SCOPE=true). ' : '';
  const others = unknown.filter((scope) => scope !== 'admin');
  return `${admin}${others.length ? `This server has no scope ${others.join(', ')}. ` : ''}Ask for some of: ${grantable.join(' ')} (and openid for an ID token).`;
}

/**
 * The page for an authorization request that cannot be sent back to the
 * app (an unknown app, a redirect URI it did not register). RFC 6749
 * §4.1.2.1: "the authorization server SHOULD inform the resource owner of
 * the error and MUST NOT automatically redirect the user-agent to the
 * invalid redirection URI".
 */
export function errorPage(error: string, description?: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>This app's request cannot go on</title>
  </head>
  <body>
    <main>
      <h1>This app's request cannot go on</h1>
      <p>The app that sent you here made a request this server cannot take, so you were not sent back to it.</p>
      <p><code>${escapeHtml(error)}</code>${description ? `: ${escapeHtml(description)}` : ''}</p>
    </main>
  </body>
</html>
`;
}
