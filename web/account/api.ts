/**
 * The account pages' only way to the server: the API, through the generated
 * typed client, as any client would call it. The browser session travels as
 * its HttpOnly cookie (the page never sees it, and never holds a token);
 * fetch sends it on these same-origin calls, and with it the
 * `Sec-Fetch-Site: same-origin` the server asks of every change a cookie
 * authorizes.
 *
 * Every call answers an `Answer`: the data, or the refusal as the page shows
 * it (the RFC 9457 problem's detail). Nothing here throws for a refusal.
 */
import { createApiClient, type ApiClient, type Problem, type Schemas } from '../../generated/client.ts';

export type User = Schemas['User'];

/** A refusal, as the page shows it: the status, the problem's type and what it says to do. */
export interface Refusal {
  status: number;
  type?: string;
  detail: string;
}

export type Answer<T> = { ok: true; data: T } | { ok: false; refusal: Refusal };

const UNREACHABLE: Refusal = { status: 0, detail: 'The server could not be reached. Check your connection and try again.' };

function refusalOf(error: unknown, response: Response): Refusal {
  const problem = (error ?? {}) as Partial<Problem>;
  const retryAfter = Number(response.headers.get('Retry-After'));
  const wait = response.status === 429 && Number.isFinite(retryAfter) && retryAfter > 0 ? ` Try again in ${Math.ceil(retryAfter / 60)} min.` : '';
  const detail = problem.detail ?? problem.title ?? `The server answered ${response.status}.`;
  return { status: response.status, type: problem.type, detail: detail.includes('Try again') ? detail : detail + wait };
}

/** The answer of a typed call; `emptyOk` for the operations that answer 204 or 202 with no body. */
export async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>, emptyOk = false): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call;
    if (response.ok && (data !== undefined || emptyOk)) return { ok: true, data: data as T };
    return { ok: false, refusal: refusalOf(error, response) };
  } catch {
    // fetch throws only when no answer came: the network, not the server.
    return { ok: false, refusal: UNREACHABLE };
  }
}

export type AuthConfig = Schemas['AuthConfig'];
export type Session = Schemas['Session'];
export type Token = Schemas['Token'];
export type NewToken = Schemas['TokenWithSecret'];
export type Passkey = Schemas['Passkey'];
export type EndedAccess = Schemas['EndedAccess'];

export class AccountApi {
  readonly client: ApiClient;

  constructor(apiBase: string) {
    this.client = createApiClient({ baseUrl: apiBase });
  }

  me(): Promise<Answer<User>> {
    return answer(this.client.GET('/me'));
  }

  authConfig(): Promise<Answer<AuthConfig>> {
    return answer(this.client.GET('/auth/config'));
  }

  createFirstAccount(body: Schemas['CreateFirstAccountRequest']): Promise<Answer<User>> {
    return answer(this.client.POST('/auth/setup', { body }));
  }

  /** The account, signed in; or, on a server with open registration that sends mail, where the mail went (202). */
  signUp(body: Schemas['SignUpRequest']): Promise<Answer<User | Schemas['SignUpByMail']>> {
    return answer(this.client.POST('/auth/signup', { body }));
  }

  signIn(body: Schemas['SignInRequest']): Promise<Answer<User>> {
    return answer(this.client.POST('/auth/signin', { body }));
  }

  signOut(): Promise<Answer<unknown>> {
    return answer(this.client.POST('/auth/signout'));
  }

  requestPasswordReset(email: string): Promise<Answer<unknown>> {
    return answer(this.client.POST('/auth/password-reset', { body: { email } }), true);
  }

  completePasswordReset(token: string, password: string): Promise<Answer<Schemas['EndedAccess']>> {
    return answer(this.client.POST('/auth/password-reset/complete', { body: { token, password } }));
  }

  sendEmailVerification(): Promise<Answer<unknown>> {
    return answer(this.client.POST('/me/email-verification'), true);
  }

  verifyEmail(token: string): Promise<Answer<unknown>> {
    return answer(this.client.POST('/auth/email-verification', { body: { token } }), true);
  }

  changePassword(currentPassword: string, newPassword: string): Promise<Answer<Schemas['EndedAccess']>> {
    return answer(this.client.POST('/me/password', { body: { currentPassword, newPassword } }));
  }

  listSessions(): Promise<Answer<Session[]>> {
    return answer(this.client.GET('/me/sessions'));
  }

  endSession(sessionid: string): Promise<Answer<unknown>> {
    return answer(this.client.DELETE('/me/sessions/{sessionid}', { params: { path: { sessionid } } }), true);
  }

  endOtherSessions(): Promise<Answer<Schemas['EndedSessions']>> {
    return answer(this.client.DELETE('/me/sessions'));
  }

  listPasskeys(): Promise<Answer<Passkey[]>> {
    return answer(this.client.GET('/me/passkeys'));
  }

  renamePasskey(passkeyid: string, name: string): Promise<Answer<Passkey>> {
    return answer(this.client.POST('/me/passkeys/{passkeyid}', { params: { path: { passkeyid } }, body: { name } }));
  }

  removePasskey(passkeyid: string): Promise<Answer<unknown>> {
    return answer(this.client.DELETE('/me/passkeys/{passkeyid}', { params: { path: { passkeyid } } }), true);
  }

  listTokens(): Promise<Answer<Token[]>> {
    return answer(this.client.GET('/me/tokens'));
  }

  /** `scopes` as the form's checkboxes give them: their values are the spec's scope names. */
  createToken(body: { name: string; scopes: string[]; expiresAt?: number }): Promise<Answer<NewToken>> {
    return answer(this.client.POST('/me/tokens', { body: { ...body, scopes: body.scopes as Schemas['TokenScope'][] } }));
  }

  revokeToken(tokenid: string): Promise<Answer<unknown>> {
    return answer(this.client.DELETE('/me/tokens/{tokenid}', { params: { path: { tokenid } } }));
  }
}
