/**
 * Why single sign-on did not sign someone in: the server sends the browser
 * back to /signin?error=<code> (server/resources/sso/oidc-routes.ts), and the
 * sign-in page shows the message of the code. A code, not the message, is
 * what travels in the URL, so that nobody can make the page say words of
 * their choosing with a link.
 */
const messages = {
  'sso-unavailable': (name: string) => `${name} could not be reached. Try again in a moment, or sign in another way.`,
  'sso-cancelled': (name: string) => `Signing in with ${name} was cancelled.`,
  'sso-refused': (name: string) => `${name} did not sign you in. Try again, or sign in another way.`,
  'sso-expired': (name: string) => `That sign-in with ${name} took too long, or was begun in another browser. Try again.`,
  'sso-failed': (name: string) => `Signing in with ${name} did not work. Try again, or sign in another way.`,
  'sso-no-email': (name: string) => `${name} did not tell this server your email address, so it cannot find your account. Allow ${name} to share it, or sign in another way.`,
  'sso-email-unverified': (name: string) =>
    `${name} has not verified your email address, so it cannot sign you in to the account here that has that address. Sign in with your password or a passkey, or verify the address at ${name}.`,
  'sso-account-unverified': (name: string) =>
    `The account here with your ${name} email address has not verified that address, so ${name} cannot sign in to it. Sign in with its password and verify the address first.`,
  'sso-no-account': (name: string) => `There is no account here for your ${name} email address, and new accounts need an invitation. Open the link of the invitation you were sent.`,
  'sso-registration-closed': (name: string) => `There is no account here for your ${name} email address, and this server takes no new accounts: its administrators create them.`,
  'sso-invite-invalid': (name: string) =>
    `This invitation does not work for your ${name} email address: it was used already, renewed, withdrawn or has expired, or it was made for another address.`,
  'account-disabled': () => "This account is disabled. Ask the server's administrator.",
} satisfies Record<string, (name: string) => string>;

export type SsoErrorCode = keyof typeof messages;

export const SSO_ERROR_CODES = Object.keys(messages) as SsoErrorCode[];

/** The message of /signin's `error` parameter, or undefined when it is none of ours. */
export function ssoErrorMessage(code: string | null, providerName: string): string | undefined {
  if (code === null || !Object.hasOwn(messages, code)) return undefined;
  return messages[code as SsoErrorCode](providerName);
}
