/**
 * What a test partner app needs to run the OAuth flow against a test server
 * without a browser: a loopback redirect URI that answers anything (RFC
 * 8252 §7.3), a cookie jar for fetch, and a person's consent given through
 * the real consent page and its form post, with their session cookie.
 * (The same steps as oauth-flow.test.ts's, which also clicks in Chromium.)
 */
import { createServer, type Server } from 'node:http';
import * as client from 'openid-client';

/** The partner app's callback: a loopback server that answers every request. */
export async function startCallback(): Promise<{ port: number; server: Server; redirectUri: string; stop(): Promise<void> }> {
  const server = createServer((_req, res) => res.end('The app got its answer.'));
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const port = (server.address() as { port: number }).port;
  return { port, server, redirectUri: `http://127.0.0.1:${port}/callback`, stop: () => new Promise((closed) => server.close(() => closed())) };
}

/** A cookie jar for fetch, enough for the consent round trip. */
export class Jar {
  private cookies = new Map<string, string>();
  constructor(initial?: string) {
    if (initial) this.set(initial);
  }
  set(pair: string) {
    const at = pair.indexOf('=');
    this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
  }
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      if (/expires=Thu, 01 Jan 1970/i.test(line) || pair.endsWith('=')) this.cookies.delete(pair.slice(0, pair.indexOf('=')));
      else this.set(pair);
    }
  }
  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Follows an authorization request as the person's browser would, answers
 * the consent page (Allow or Deny) with their session cookie, and returns
 * the URL the app is sent back to. Throws on any page it does not expect.
 */
export async function consentByFetch(url: URL, cookie: string, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const origin = url.origin;
  const jar = new Jar(cookie);
  let at = url;
  for (let step = 0; step < 10; step += 1) {
    if (at.origin !== origin) return at;
    const response = await fetch(at, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(response);
    if (response.status === 303 || response.status === 302) {
      at = new URL(response.headers.get('location')!, at);
      continue;
    }
    const page = await response.text();
    if (response.status !== 200 || !page.includes('Allow')) throw new Error(`Expected the consent page at ${at}, got ${response.status}: ${page.slice(0, 500)}`);
    const answer = await fetch(at, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision }),
    });
    jar.take(answer);
    if (answer.status !== 303) throw new Error(`The consent answer got ${answer.status}: ${await answer.text()}`);
    at = new URL(answer.headers.get('location')!, at);
  }
  throw new Error(`Too many steps from ${url}`);
}

/** Follows an authorization request as the person's browser would, to the consent page, and returns its HTML. */
export async function consentPageOf(url: URL, cookie: string): Promise<string> {
  const jar = new Jar(cookie);
  let at = url;
  for (let step = 0; step < 10; step += 1) {
    const response = await fetch(at, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(response);
    if (response.status !== 303 && response.status !== 302) return response.text();
    at = new URL(response.headers.get('location')!, at);
  }
  throw new Error(`Too many steps from ${url}`);
}

/** An app the person registered and let in: its id, its client (openid-client's), and the tokens of its grant. */
export interface ConnectedApp {
  appId: string;
  config: client.Configuration;
  accessToken: string;
  refreshToken: string;
}

/**
 * Registers a public app for the signed-in person (POST /apps, with their session), sends them through the consent
 * page for `scope`, and exchanges the code: the app as a partner's desktop app would be, acting for that person.
 * `redirectUri` is a loopback callback (startCallback's), reached on any port (RFC 8252 §7.3).
 */
export async function connectApp(
  server: { address: string },
  person: { cookie: string; fetch(path: string, init?: RequestInit): Promise<Response> },
  options: { name: string; scope: string; redirectUri: string },
): Promise<ConnectedApp> {
  const created = await person.fetch('/apps', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: options.name, type: 'public', redirectUris: ['http://127.0.0.1/callback'] }) });
  if (created.status !== 200) throw new Error(`POST /apps answered ${created.status}: ${await created.text()}`);
  const { id: appId } = (await created.json()) as { id: string };
  const config = await client.discovery(new URL(server.address), appId, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: options.scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const back = await consentByFetch(url, person.cookie);
  const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
  return { appId, config, accessToken: tokens.access_token, refreshToken: tokens.refresh_token! };
}
