/**
 * The passkey ceremonies (WebAuthn), owned by the passkeys work of issue 20:
 * this placeholder has their signatures only, so that the account pages
 * compile and call them; the passkeys helper's version replaces it whole.
 */
import type { ApiClient } from '../../generated/client.ts';

/** Registers a new passkey named `name` for the signed-in account (startPasskeyRegistration, then addPasskey). */
export async function addPasskey(_client: ApiClient, _name: string): Promise<void> {
  throw new Error('passkeys not built yet');
}

/** Signs in with a passkey, no email needed (startPasskeySignIn, then finishPasskeySignIn); the session cookie is set on success. */
export async function signInWithPasskey(_client: ApiClient): Promise<void> {
  throw new Error('passkeys not built yet');
}
