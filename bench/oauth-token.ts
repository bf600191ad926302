/**
 * An OAuth access token for the bench user, got as a partner app gets one
 * (openid-client): a public app registered through POST /apps, the
 * authorization request with PKCE S256, the consent page answered Allow
 * with the user's session cookie (the form post a browser sends, with its
 * Origin), and the code exchanged at the token endpoint.
 */
import * as client from 'openid-client';

/** Follows the authorization as a browser would, answering the consent page; answers the URL the app is sent back to. */
async function consent(issuer: URL, url: URL, sessionCookie: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const [name, value] = sessionCookie.split(/=(.*)/s);
  cookies.set(name, value);
  const header = () => [...cookies].map(([key, val]) => `${key}=${val}`).join('; ');
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  let at = url;
  for (let step = 0; step < 10; step += 1) {
    if (at.origin !== issuer.origin) return at;
    const response = await fetch(at, { redirect: 'manual', headers: { cookie: header() } });
    keep(response);
    if (response.status === 302 || response.status === 303) {
      at = new URL(response.headers.get('location')!, at);
      continue;
    }
    if (response.status !== 200) throw new Error(`the consent page answered ${response.status}: ${await response.text()}`);
    const allowed = await fetch(at, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: header(), origin: issuer.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision: 'allow' }),
    });
    keep(allowed);
    if (allowed.status !== 303) throw new Error(`Allow answered ${allowed.status}`);
    at = new URL(allowed.headers.get('location')!, at);
  }
  throw new Error(`Too many steps from ${url}`);
}

/**
 * An access token with `scope`, for the account whose session `cookie` is given. The app is registered with the
 * session, as the server's pages do it: apps are managed by a signed-in person only, never with a token (a leaked
 * token cannot make more).
 */
export async function oauthAccessToken(serverUrl: string, sessionCookie: string, scope: string): Promise<string> {
  const issuer = new URL(serverUrl);
  const registered = await fetch(`${serverUrl}/api/v1/apps`, {
    method: 'POST',
    // The Origin a browser sends with the session cookie: the server refuses a cookie from another site.
    headers: { cookie: sessionCookie, origin: serverUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench partner', type: 'public', redirectUris: ['http://127.0.0.1/callback'] }),
  });
  if (registered.status !== 200) throw new Error(`POST /apps answered ${registered.status}: ${await registered.text()}`);
  const app = (await registered.json()) as { id: string };
  const config = await client.discovery(issuer, app.id, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1:9/callback',
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const back = await consent(issuer, url, sessionCookie);
  const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
  return tokens.access_token;
}
