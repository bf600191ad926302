/**
 * The browser's half of passkeys: adding one to the signed-in account
 * (/settings, tab Security, button "Add a passkey") and signing in with one
 * (/signin, button "Sign in with a passkey"). Each is a round trip through
 * the API with the generated typed client: the server's options go to the
 * browser's WebAuthn (through @simplewebauthn/browser, which turns their
 * base64url fields into the buffers navigator.credentials wants), and its
 * answer goes back with the ceremony's id. The session travels as its
 * HttpOnly cookie; these functions never see it.
 */
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  WebAuthnError,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/browser';
import type { ApiClient, Problem, Schemas } from '../../generated/client.ts';

// The spec passes the WebAuthn JSON types through as open objects (their W3C definitions are the reference).
type WireRegistration = Schemas['AddPasskeyRequest']['response'];
type WireAuthentication = Schemas['FinishPasskeySignInRequest']['response'];

/**
 * Why a passkey was not added, or did not sign in, in words a page can show
 * as they are. `cancelled`: the person closed the browser's dialog (or it
 * timed out), which a page need not call an error.
 */
export class PasskeyError extends Error {
  readonly status: number | undefined;
  readonly cancelled: boolean;

  constructor(message: string, { status, cancelled = false }: { status?: number; cancelled?: boolean } = {}) {
    super(message);
    this.name = 'PasskeyError';
    this.status = status;
    this.cancelled = cancelled;
  }
}

function requireWebAuthn(): void {
  if (!browserSupportsWebAuthn()) throw new PasskeyError('This browser cannot use passkeys. Use another browser, or sign in with your email address and password.');
}

/** What the server's problem says to do; the status alone when it said nothing. */
function refused(error: unknown, response: Response): PasskeyError {
  const problem = (error ?? {}) as Partial<Problem>;
  return new PasskeyError(problem.detail ?? problem.title ?? `The server answered ${response.status}.`, { status: response.status });
}

/** The browser's own refusals, in words; a closed dialog is a cancellation, not a fault. */
function ceremonyFailed(error: unknown): PasskeyError {
  if (error instanceof WebAuthnError) {
    if (error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return new PasskeyError('This device or password manager holds a passkey for your account already.');
    if (error.code === 'ERROR_CEREMONY_ABORTED') return new PasskeyError('The passkey dialog was closed.', { cancelled: true });
  }
  const name = (error as Error | undefined)?.name;
  // WebAuthn: NotAllowedError is what the browser raises when the person cancels, or the ceremony times out.
  if (name === 'NotAllowedError' || name === 'AbortError') return new PasskeyError('The passkey dialog was closed, or it timed out.', { cancelled: true });
  return new PasskeyError(`The browser could not use a passkey: ${(error as Error | undefined)?.message ?? String(error)}`);
}

/**
 * Adds a passkey, named `name`, to the signed-in account: asks the server
 * for the options, lets the browser make the passkey, and sends it back.
 * Throws a PasskeyError saying why when it was not added.
 */
export async function addPasskey(client: ApiClient, name: string): Promise<void> {
  requireWebAuthn();
  const started = await client.POST('/me/passkeys/options', {});
  if (!started.data) throw refused(started.error, started.response);
  let response: RegistrationResponseJSON;
  try {
    response = await startRegistration({ optionsJSON: started.data.options as unknown as PublicKeyCredentialCreationOptionsJSON });
  } catch (error) {
    throw ceremonyFailed(error);
  }
  const added = await client.POST('/me/passkeys', { body: { challengeId: started.data.challengeId, name, response: response as unknown as WireRegistration } });
  if (!added.data) throw refused(added.error, added.response);
}

/**
 * Signs in with a passkey, asking for no email address: the browser offers
 * the passkeys it holds for this server, and the one picked names the
 * account. On success the server has set the session cookie. Throws a
 * PasskeyError saying why otherwise.
 */
export async function signInWithPasskey(client: ApiClient): Promise<void> {
  requireWebAuthn();
  const started = await client.POST('/auth/passkeys/options', {});
  if (!started.data) throw refused(started.error, started.response);
  let response: AuthenticationResponseJSON;
  try {
    response = await startAuthentication({ optionsJSON: started.data.options as unknown as PublicKeyCredentialRequestOptionsJSON });
  } catch (error) {
    throw ceremonyFailed(error);
  }
  const signedIn = await client.POST('/auth/passkeys/signin', { body: { challengeId: started.data.challengeId, response: response as unknown as WireAuthentication } });
  if (!signedIn.data) throw refused(signedIn.error, signedIn.response);
}
