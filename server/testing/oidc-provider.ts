/**
 * A real OpenID provider for tests (oidc-provider), on loopback over http,
 * as an operator's Authentik or Keycloak would be over https: discovery,
 * authorization with its own login and consent pages, the token endpoint,
 * signed ID tokens, userinfo. It has one client (this server), whose
 * redirect URI is registered once the server under test knows its address,
 * and the people who may sign in, chosen per test with the claims the
 * provider asserts about them (email, and whether it is verified).
 *
 * A test goes through the provider's pages as a browser would: with fetch
 * and a cookie jar it follows the redirects, fills in the login form (the
 * development login takes any account id and password) and accepts the
 * consent form, and is handed the URL the provider sends the browser back
 * to (the redirect URI with code, state and iss), to open itself.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Backend } from './databases.ts';
import { startTestServer, type TestServer } from './test-server.ts';

export interface TestPerson {
  email?: string;
  /** What the provider says of the email: true, false, or (undefined) nothing. */
  emailVerified?: boolean;
  name?: string;
}

export interface TestOidcProvider {
  /** http://127.0.0.1:<port>, the issuer identifier. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The path of every request the provider received, in order (/.well-known/openid-configuration, /auth, /token, /me…). */
  readonly requests: string[];
  /** The OIDC_* settings of a server that signs in with this provider. */
  env(name?: string): Record<string, string>;
  /** Registers the one redirect URI the client may be sent back to (the server's /auth/oidc/callback). */
  allowRedirect(redirectUri: string): Promise<void>;
  /** Someone who can sign in at the provider, known there by `subject`. */
  addPerson(subject: string, person: TestPerson): void;
  /**
   * Opens `authorizationUrl` and signs in at the provider as `subject`,
   * accepting its consent page: answers the URL the provider then redirects
   * the browser to, without opening it.
   */
  signIn(authorizationUrl: URL | string, subject: string): Promise<URL>;
  /** Opens `authorizationUrl` and cancels at the provider's login page: answers where the provider sends the browser (error=access_denied). */
  cancel(authorizationUrl: URL | string): Promise<URL>;
  /** Stops answering (connections refused) until `resume`: a provider that is down. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export interface TestOidcProviderOptions {
  /**
   * Whether the ID token carries the person's claims (email, name). By
   * default it does not: the OpenID Connect Core 1.0 rule (section 5.4) that
   * with a code, "the Claims … are returned from the UserInfo Endpoint", so
   * the client must ask userinfo; Keycloak and Google put them in the ID
   * token too, which this option imitates.
   */
  claimsInIdToken?: boolean;
}

export async function startOidcProvider(options: TestOidcProviderOptions = {}): Promise<TestOidcProvider> {
  const people = new Map<string, TestPerson>();
  let server: Server = createServer();
  await listen(server, 0);
  const { port } = server.address() as { port: number };
  const issuer = `http://127.0.0.1:${port}`;
  // Unique per provider: oidc-provider's in-memory storage is shared by every provider in the process.
  const clientId = `audio-share-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: !options.claimsInIdToken,
    // Refuse any authorization request without a PKCE challenge, whatever the client: the tests prove the server sends one.
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    // Lifetimes in seconds, given so that the provider does not warn that they are its defaults.
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount(_ctx, sub) {
      const person = people.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          ...(person.email === undefined ? {} : { email: person.email }),
          ...(person.emailVerified === undefined ? {} : { email_verified: person.emailVerified }),
          ...(person.name === undefined ? {} : { name: person.name }),
        }),
      };
    },
  });
  provider.on('server_error', (_ctx, error) => console.error('test OpenID provider:', error));
  const requests: string[] = [];
  const serve = provider.callback();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(new URL(req.url ?? '/', issuer).pathname);
    serve(req, res);
  };
  server.on('request', handler);

  /** Follows the provider's redirects and forms, as a browser with cookies would, until it sends the browser elsewhere. */
  async function interact(start: URL | string, act: (page: string, url: URL) => { url: URL; form?: URLSearchParams }): Promise<URL> {
    const jar = new Map<string, string>();
    let request: { url: URL; form?: URLSearchParams } = { url: new URL(start) };
    for (let step = 0; step < 20; step += 1) {
      if (request.url.origin !== issuer) return request.url;
      const response = await fetch(request.url, {
        method: request.form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '), ...(request.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: request.form?.toString(),
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const separator = pair.indexOf('=');
        const [name, value] = [pair.slice(0, separator).trim(), pair.slice(separator + 1).trim()];
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
        else jar.set(name, value);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        request = { url: new URL(location, request.url) };
        continue;
      }
      const page = await response.text();
      if (response.status !== 200) throw new Error(`The OpenID provider answered ${response.status} at ${request.url}: ${page.slice(0, 500)}`);
      request = act(page, request.url);
    }
    throw new Error(`Too many steps at the OpenID provider from ${start}`);
  }

  return {
    issuer,
    clientId,
    clientSecret,
    requests,
    env: (name = 'Test SSO') => ({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret, OIDC_NAME: name }),
    async allowRedirect(redirectUri) {
      // A client the provider finds through its storage, not its static configuration: the redirect URI is known only
      // once the server under test listens.
      await provider.Client.adapter.upsert(clientId, {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      });
    },
    addPerson(subject, person) {
      people.set(subject, person);
    },
    signIn(authorizationUrl, subject) {
      return interact(authorizationUrl, (page, url) => {
        const form = formOf(page, url);
        if (form.fields.get('prompt') === 'login') {
          form.fields.set('login', subject);
          form.fields.set('password', 'any password: the development login takes any');
        } else if (form.fields.get('prompt') !== 'consent') {
          throw new Error(`An unexpected page at the OpenID provider (${url}): ${page.slice(0, 500)}`);
        }
        return { url: form.action, form: form.fields };
      });
    },
    cancel(authorizationUrl) {
      return interact(authorizationUrl, (page, url) => {
        // The development pages' "[ Cancel ]" link (interaction/<uid>/abort).
        const abort = /<a href="([^"]*\/abort)"/.exec(page)?.[1];
        if (!abort) throw new Error(`No cancel link at the OpenID provider (${url}): ${page.slice(0, 500)}`);
        return { url: new URL(unescapeHtml(abort), url) };
      });
    },
    async pause() {
      await close(server);
    },
    async resume() {
      server = createServer(handler);
      await listen(server, port);
    },
    close: () => close(server),
  };
}

/** Per-describe setup: one provider for the describe's tests, closed after them. */
export function useOidcProvider(options: TestOidcProviderOptions = {}): { readonly provider: TestOidcProvider } {
  let provider: TestOidcProvider | undefined;
  beforeAll(async () => {
    provider = await startOidcProvider(options);
  });
  afterAll(async () => {
    await provider?.close();
  });
  return {
    get provider() {
      if (!provider) throw new Error('The OpenID provider has not started yet');
      return provider;
    },
  };
}

/**
 * Per-describe setup: a provider, and a test server that signs in with it
 * (OIDC_NAME "Test SSO"), its callback registered at the provider.
 */
export function useServerWithOidc(backend: Backend, env: Record<string, string> = {}): { readonly provider: TestOidcProvider; readonly server: TestServer } {
  let provider: TestOidcProvider | undefined;
  let server: TestServer | undefined;
  // The test reporter prints this store beside each test's name (scripts/vitest-store-reporter.ts).
  beforeEach((context) => {
    (context.task.meta as { store?: string }).store = backend;
  });
  beforeAll(async () => {
    provider = await startOidcProvider();
    server = await startTestServer(backend, { ...provider.env('Test SSO'), ...env });
    await provider.allowRedirect(`${server.address}/auth/oidc/callback`);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });
  return {
    get provider() {
      if (!provider) throw new Error('The OpenID provider has not started yet');
      return provider;
    },
    get server() {
      if (!server) throw new Error('The test server has not started yet');
      return server;
    },
  };
}

/** The one form of a development page: where it posts, and its hidden fields. */
function formOf(page: string, url: URL): { action: URL; fields: URLSearchParams } {
  const action = /<form[^>]*action="([^"]*)"/.exec(page)?.[1];
  if (!action) throw new Error(`No form at the OpenID provider (${url}): ${page.slice(0, 500)}`);
  const fields = new URLSearchParams();
  for (const [, name, value] of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"/g)) fields.set(unescapeHtml(name), unescapeHtml(value));
  return { action: new URL(unescapeHtml(action), url), fields };
}

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[entity] ?? '');
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((listening, failed) => {
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed);
      listening();
    });
  });
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((closed) => server.close(() => closed()));
}
