/**
 * A signed-in browser for the server's tests: an account with a password,
 * signed in through POST /auth/signin as the sign-in page does, and clients
 * that send its session cookie from the server's own origin.
 */
import { createApiClient, type ApiClient } from '../../generated/client.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { TestServer } from './test-server.ts';

export const TEST_PASSWORD = 'a long and unusual passphrase';

export interface SignedIn {
  /** The session cookie, `name=value`, for a Cookie header. */
  cookie: string;
  /** The headers a page of the server's own sends with the cookie. */
  headers: Record<string, string>;
  /** A typed client that sends them. */
  api: ApiClient;
  /** A raw request to the API root with them. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Gives the account `email` (made if needed) the password, and signs it in. */
export async function signIn(server: TestServer, email: string, password = TEST_PASSWORD): Promise<SignedIn> {
  const user = await server.ctx.store.users.findOrCreate(email, Date.now());
  await server.ctx.store.users.setPasswordHash(user.id, await hashPassword(password));
  const origin = new URL(server.apiUrl).origin;
  const ownPage = { Origin: origin, 'Sec-Fetch-Site': 'same-origin' };
  const response = await fetch(`${server.apiUrl}/auth/signin`, {
    method: 'POST',
    headers: { ...ownPage, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`Signing in ${email} answered ${response.status}: ${await response.text()}`);
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .find((pair) => /^(__Host-)?as_session=/.test(pair));
  if (!cookie) throw new Error(`Signing in ${email} set no session cookie`);
  const headers = { ...ownPage, Cookie: cookie };
  return {
    cookie,
    headers,
    api: createApiClient({ baseUrl: server.apiUrl, headers }),
    fetch: (path, init = {}) => fetch(server.apiUrl + path, { ...init, headers: { ...headers, ...Object.fromEntries(new Headers(init.headers)) } }),
  };
}
