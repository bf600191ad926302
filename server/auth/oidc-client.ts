/**
 * Single sign-on's client side (OpenID Connect 1.0, authorization code flow
 * with PKCE), a thin layer over openid-client that keeps its decisions in
 * one place:
 *
 * - Discovery happens once, on first use, not at start: a provider that is
 *   down when the server starts must not stop it, and one that was down is
 *   asked again on a later sign-in (after `retryAfterMs`, so that a provider
 *   that is down is not asked on every click).
 * - Every round trip carries a fresh PKCE verifier (S256), state and nonce
 *   (RFC 9700, section 2.1.1: "clients MUST prevent injection (replay) of
 *   authorization codes"; PKCE does, and state and nonce too for providers
 *   that ignore PKCE). The caller keeps them for the way back.
 * - On the way back openid-client checks the state, exchanges the code with
 *   the verifier and validates the ID token (signature, issuer, audience,
 *   expiry, nonce). What is left here: which claims to believe.
 * - An http:// issuer (a loopback one, config.ts allows no other) is
 *   allowed by openid-client's allowInsecureRequests, for that one provider.
 */
import * as client from 'openid-client';
import type { OidcSettings } from '../config.ts';

/** Where to send the browser, and what must be kept, bound to that browser, for its way back. */
export interface OidcRoundTrip {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Who the provider says signed in. */
export interface OidcIdentity {
  /** The provider's issuer identifier, from the validated ID token (iss). */
  issuer: string;
  /** The person's identifier at the provider (sub): "locally unique and never reassigned within the Issuer" (OpenID Connect Core 1.0, section 2). */
  subject: string;
  email: string | undefined;
  /** True only when the provider says so, with the boolean true: an email is not taken as proof of its owner otherwise. */
  emailVerified: boolean;
  name: string | undefined;
}

/**
 * Why a round trip failed: the provider could not be reached or answered
 * nonsense (`unavailable`); the provider said no, e.g. the person cancelled
 * (`refused`, with the provider's error code, such as access_denied); or
 * the answer did not hold up (`invalid`: state, code, ID token).
 */
export class OidcError extends Error {
  readonly reason: 'unavailable' | 'refused' | 'invalid';
  /** The OAuth error code the provider gave (access_denied, invalid_grant…), if it gave one. */
  readonly providerError: string | undefined;
  constructor(reason: OidcError['reason'], message: string, options: { providerError?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'OidcError';
    this.reason = reason;
    this.providerError = options.providerError;
  }
}

export interface OidcClient {
  /** OIDC_NAME: what the sign-in page calls the provider. */
  readonly name: string;
  /** A new round trip to the provider, which will send the browser back to `redirectUri`. */
  begin(redirectUri: string): Promise<OidcRoundTrip>;
  /**
   * The browser is back at `callbackUrl` (the redirect URI with the
   * provider's query): checks the answer against what `begin` gave, exchanges
   * the code, and answers who signed in. Throws OidcError.
   */
  finish(callbackUrl: URL, expected: Omit<OidcRoundTrip, 'url'>): Promise<OidcIdentity>;
}

export interface OidcClientOptions {
  /** How long after a failed discovery the provider is asked again; until then sign-ins fail at once. */
  retryAfterMs?: number;
  /** Each request to the provider, in seconds. */
  timeoutSeconds?: number;
  now?: () => number;
}

/** What the server asks the provider for: the person's subject (openid), email and whether it is verified (email), and name (profile). */
const scope = 'openid email profile';

export function createOidcClient(settings: OidcSettings, options: OidcClientOptions = {}): OidcClient {
  const { retryAfterMs = 5000, timeoutSeconds = 10, now = Date.now } = options;
  let discovered: Promise<client.Configuration> | undefined;
  let lastFailure: { at: number; error: OidcError } | undefined;

  const configuration = (): Promise<client.Configuration> => {
    if (discovered) return discovered;
    if (lastFailure && now() - lastFailure.at < retryAfterMs) return Promise.reject(lastFailure.error);
    discovered = client
      .discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, clientAuthentication(settings.clientSecret), {
        execute: settings.insecure ? [client.allowInsecureRequests] : [],
        timeout: timeoutSeconds,
      })
      .catch((cause: unknown) => {
        const error = new OidcError('unavailable', `The OpenID provider at ${settings.issuer} could not be discovered: ${messageOf(cause)}`, { cause });
        // Forget the failure's promise, so that a later sign-in asks again.
        discovered = undefined;
        lastFailure = { at: now(), error };
        throw error;
      });
    return discovered;
  };

  return {
    name: settings.name,
    async begin(redirectUri) {
      const config = await configuration();
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope,
        // RFC 7636, section 4.2: S256 "is Mandatory To Implement (MTI) on the server"; plain is never sent.
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url, state, nonce, codeVerifier };
    },

    async finish(callbackUrl, expected) {
      const config = await configuration();
      let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
      try {
        tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: expected.codeVerifier,
          expectedState: expected.state,
          expectedNonce: expected.nonce,
          idTokenExpected: true,
        });
      } catch (cause) {
        throw asOidcError(cause);
      }
      const claims = tokens.claims();
      if (!claims) throw new OidcError('invalid', 'The OpenID provider answered without an ID token.');
      let profile: Record<string, unknown> = claims;
      // OpenID Connect Core 1.0, section 5.4: with a code, the email and profile claims "are returned from the
      // UserInfo Endpoint"; some providers put them in the ID token as well, and then the ID token is enough.
      if (claims.email === undefined && config.serverMetadata().userinfo_endpoint) {
        try {
          // The userinfo answer's sub must be the ID token's (section 5.3.2); openid-client checks it.
          profile = { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims };
        } catch (cause) {
          throw asOidcError(cause);
        }
      }
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof profile.email === 'string' && profile.email !== '' ? profile.email : undefined,
        emailVerified: profile.email_verified === true,
        name: typeof profile.name === 'string' && profile.name.trim() !== '' ? profile.name.trim() : undefined,
      };
    },
  };
}

/**
 * How the client authenticates at the token endpoint: client_secret_basic,
 * the default of OpenID Connect Core 1.0 (section 9) and RFC 8414 (section
 * 2), unless the provider lists its methods without it but with
 * client_secret_post.
 */
function clientAuthentication(secret: string): client.ClientAuth {
  const basic = client.ClientSecretBasic(secret);
  const post = client.ClientSecretPost(secret);
  return (as, metadata, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    (usePost ? post : basic)(as, metadata, body, headers);
  };
}

function asOidcError(cause: unknown): OidcError {
  if (cause instanceof OidcError) return cause;
  // The provider sent the browser back with an error (RFC 6749, section 4.1.2.1): access_denied when the person cancelled.
  if (cause instanceof client.AuthorizationResponseError) {
    return new OidcError('refused', `The OpenID provider refused the sign-in: ${cause.error}${cause.error_description ? ` (${cause.error_description})` : ''}`, { providerError: cause.error, cause });
  }
  // The token or userinfo endpoint answered with an OAuth error (invalid_grant: a code used twice, expired, or not ours).
  if (cause instanceof client.ResponseBodyError || cause instanceof client.WWWAuthenticateChallengeError) {
    const code = cause instanceof client.ResponseBodyError ? cause.error : cause.cause[0]?.parameters.error;
    return new OidcError('invalid', `The OpenID provider did not accept the sign-in: ${code ?? cause.message}`, { providerError: code, cause });
  }
  // fetch's own failures (connection refused, timeout): the provider is not there.
  if (cause instanceof TypeError && cause.message === 'fetch failed') return new OidcError('unavailable', `The OpenID provider could not be reached: ${messageOf(cause)}`, { cause });
  if (cause instanceof DOMException && (cause.name === 'TimeoutError' || cause.name === 'AbortError')) return new OidcError('unavailable', 'The OpenID provider did not answer in time.', { cause });
  // The rest are checks that failed: a state that is not the one sent, an ID token whose nonce, audience or signature is wrong.
  return new OidcError('invalid', `The answer from the OpenID provider did not hold up: ${messageOf(cause)}`, { cause });
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
