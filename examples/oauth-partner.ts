/**
 * A partner's app connecting to a person's account with OAuth 2.1, built on
 * openid-client: discovery (RFC 8414), dynamic registration (RFC 7591) when
 * no CLIENT_ID is given, the authorization code grant with PKCE (S256) and
 * a loopback redirect URI on any free port (RFC 8252), the code exchange,
 * an API call, and a refresh. The README's "OAuth for partners" shows it, and
 * examples/oauth-partner.test.ts runs it against a real server.
 *
 *   SERVER=http://localhost:8080 [CLIENT_ID=app_…] node examples/oauth-partner.ts
 *
 * It prints the URL to open in the browser, where the person signs in and
 * answers Allow or Deny; then what the API answered.
 */
import { createServer } from 'node:http';
import * as client from 'openid-client';

const server = new URL(process.env.SERVER ?? 'http://localhost:8080');
// http is for a server on this machine only; a real one is https.
const options = server.protocol === 'http:' ? { execute: [client.allowInsecureRequests], algorithm: 'oauth2' as const } : { algorithm: 'oauth2' as const };

// The redirect URI: a loopback server of this process, on whatever port is free.
const callback = createServer();
await new Promise<void>((listening) => callback.listen(0, '127.0.0.1', listening));
const port = (callback.address() as { port: number }).port;
const redirectUri = `http://127.0.0.1:${port}/callback`;

const config = process.env.CLIENT_ID
  ? await client.discovery(server, process.env.CLIENT_ID, undefined, client.None(), options)
  : await client.dynamicClientRegistration(
      server,
      // Registered without a port: the server matches a loopback redirect URI on any port (RFC 8252 §7.3).
      { client_name: 'Example partner app', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', application_type: 'native' },
      client.None(),
      options,
    );

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'projects:read',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
});
console.log(`Open this in your browser: ${url.href}`);

const back = await new Promise<URL>((answered) => {
  callback.on('request', (req, res) => {
    res.end('Done: you can close this tab.');
    answered(new URL(req.url ?? '/', redirectUri));
  });
});
callback.close();
if (back.searchParams.get('error')) {
  console.log(`Not connected: ${back.searchParams.get('error')}`);
  process.exit(1);
}

const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
const projects = await client.fetchProtectedResource(config, tokens.access_token, new URL('/api/v1/projects', server), 'GET');
console.log(`Connected with ${tokens.scope}: ${((await projects.json()) as unknown[]).length} projects`);

// An hour later the access token has expired: the refresh token gives a new pair (and is spent).
const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!);
console.log(`Refreshed: a new refresh token (${renewed.refresh_token !== tokens.refresh_token})`);
