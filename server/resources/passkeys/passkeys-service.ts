/**
 * Passkeys (WebAuthn Level 3), with @simplewebauthn/server: an account adds,
 * names, lists and removes its own; anyone may sign in with one, naming no
 * account (the credential is discoverable, and names it).
 *
 * Issue 20: "The relying party is PUBLIC_URL's host name." The origin the
 * browser must report is PUBLIC_URL's origin. Both are read per call, not
 * at start: a server on port 0 learns its URL only once it listens.
 *
 * Each ceremony's challenge is stored (auth_challenges) for 5 minutes and
 * taken once, so that any API process can finish what another began and a
 * replayed answer finds nothing.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { newId } from '../../lib/ids.ts';
import { badRequest, conflict, HttpProblem, notFound } from '../../http/problem.ts';
import type { PasskeyRecord } from './passkey-repository.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config'>;

/** How long a ceremony may take: the browser's timeout and the stored challenge's life. */
export const CEREMONY_MS = 5 * 60_000;
/** An account's passkeys are few (one per device or password manager); the bound keeps the list and the exclusions small. */
export const MAX_PASSKEYS = 100;
/** Shown by authenticators beside the account's name when they offer its passkeys. */
const RP_NAME = 'Audio Share';
/**
 * EdDSA, ES256 and RS256 (COSE -8, -7, -257), which every authenticator
 * offers one of. Named here, not left to the library's default, which adds
 * ML-DSA-44 on runtimes that have it: on Node 24 that is an experimental Web
 * Crypto API, with a warning in the log at every registration.
 */
const ALGORITHMS = [-8, -7, -257];

/** The relying party: PUBLIC_URL's host name, and the origin its pages are served from. */
export function relyingParty(config: Pick<Context['config'], 'publicUrl'>): { rpID: string; origin: string } {
  const url = new URL(config.publicUrl);
  return { rpID: url.hostname, origin: url.origin };
}

const bytesOf = (base64url: string) => new Uint8Array(Buffer.from(base64url, 'base64url'));
const base64urlOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * The user handle a passkey carries: the account's id. WebAuthn Level 3
 * §5.4.3: "The user handle MUST NOT contain personally identifying
 * information about the user, such as a username or e-mail address"; the id
 * is random. It is the same for every passkey of the account, so that an
 * authenticator replaces an account's passkey instead of holding two.
 */
const userHandleOf = (userId: string) => new TextEncoder().encode(userId);

export function passkeyJson(passkey: PasskeyRecord): Schemas['Passkey'] {
  return {
    id: passkey.id,
    object: 'passkey',
    name: passkey.name,
    backedUp: passkey.backedUp,
    transports: passkey.transports,
    timeCreated: passkey.timeCreated,
    timeLastUsed: passkey.timeLastUsed,
  };
}

/** One answer for every way a passkey sign-in fails, so that it tells an attacker nothing of which. */
export const passkeySignInRefused = () =>
  new HttpProblem('unauthorized', 'This passkey did not sign you in. Try again, or sign in with your email address and password.', {
    // RFC 9110 §11.6.1: "A server generating a 401 (Unauthorized) response MUST send a WWW-Authenticate header field".
    headers: { 'WWW-Authenticate': 'Bearer realm="api"' },
  });

const ceremonyGone = () =>
  badRequest('This passkey ceremony is unknown, was used already or has expired (it lasts 5 minutes). Start again.', [{ pointer: '#/challengeId', detail: 'unknown, used or expired' }]);

export async function listPasskeys(ctx: Ports, caller: Caller): Promise<Schemas['Passkey'][]> {
  return (await ctx.store.passkeys.listOf(caller.id)).map(passkeyJson);
}

export async function startRegistration(ctx: Ports, caller: Caller): Promise<Schemas['PasskeyRegistrationOptions']> {
  const user = await ctx.store.users.get(caller.id);
  if (!user) throw new Error(`user ${caller.id} does not exist`);
  const existing = await ctx.store.passkeys.listOf(user.id);
  if (existing.length >= MAX_PASSKEYS) throw conflict(`Your account holds ${MAX_PASSKEYS} passkeys, the most it may. Remove one to add another.`);
  const { rpID } = relyingParty(ctx.config);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userID: userHandleOf(user.id),
    userName: user.email,
    userDisplayName: user.name ?? user.email,
    timeout: CEREMONY_MS,
    attestationType: 'none',
    // WebAuthn §5.4.3 excludeCredentials: "The Relying Party SHOULD use this … to limit the creation of multiple
    // credentials for the same account on a single authenticator."
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    // Discoverable ("resident") credentials, required: signing in names no account, so the authenticator must find the
    // passkey by itself.
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  const challenge = await ctx.store.passkeys.createChallenge('passkey-registration', user.id, options.challenge, ctx.clock.now(), CEREMONY_MS);
  return { challengeId: challenge.id, options: options as unknown as Schemas['PasskeyRegistrationOptions']['options'] };
}

export async function addPasskey(ctx: Ports, caller: Caller, body: Schemas['AddPasskeyRequest']): Promise<Schemas['Passkey']> {
  const now = ctx.clock.now();
  const challenge = await ctx.store.passkeys.takeChallenge('passkey-registration', body.challengeId, now);
  // A ceremony is its account's own: another account's challenge is no more use than an unknown one.
  if (!challenge || challenge.userId !== caller.id) throw ceremonyGone();
  const { rpID, origin } = relyingParty(ctx.config);
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response: body.response as unknown as RegistrationResponseJSON,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      // userVerification 'preferred', as asked: an authenticator without a PIN or biometrics is still accepted.
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (error) {
    // Whatever the browser sent is hostile input: a malformed answer is the sender's fault, never a 500.
    throw badRequest(`The passkey's answer does not verify: ${(error as Error).message}`, [{ pointer: '#/response', detail: 'does not verify' }]);
  }
  if (!verification.verified) throw badRequest('The passkey\'s answer does not verify.', [{ pointer: '#/response', detail: 'does not verify' }]);
  const { credential, credentialBackedUp } = verification.registrationInfo;
  if ((await ctx.store.passkeys.countOf(caller.id)) >= MAX_PASSKEYS) throw conflict(`Your account holds ${MAX_PASSKEYS} passkeys, the most it may. Remove one to add another.`);
  const passkey: PasskeyRecord = {
    id: newId('pky'),
    userId: caller.id,
    credentialId: credential.id,
    publicKey: base64urlOf(credential.publicKey),
    counter: credential.counter,
    transports: (credential.transports ?? []).slice(0, 16),
    name: body.name.trim(),
    backedUp: credentialBackedUp,
    timeCreated: now,
    timeLastUsed: null,
  };
  if (!(await ctx.store.passkeys.insert(passkey))) throw conflict('This passkey is registered already. Remove it first to add it again.');
  return passkeyJson(passkey);
}

export async function renamePasskey(ctx: Ports, caller: Caller, passkeyId: string, body: Schemas['RenamePasskeyRequest']): Promise<Schemas['Passkey']> {
  if (!(await ctx.store.passkeys.rename(caller.id, passkeyId, body.name.trim()))) throw notFound(`You have no passkey ${passkeyId}.`);
  return passkeyJson((await ctx.store.passkeys.get(passkeyId))!);
}

/** Removes one of the caller's passkeys; answers it, for the security event. */
export async function removePasskey(ctx: Ports, caller: Caller, passkeyId: string): Promise<PasskeyRecord> {
  const passkey = await ctx.store.passkeys.get(passkeyId);
  if (!passkey || passkey.userId !== caller.id || !(await ctx.store.passkeys.remove(caller.id, passkeyId))) throw notFound(`You have no passkey ${passkeyId}.`);
  return passkey;
}

export async function startSignIn(ctx: Ports): Promise<Schemas['PasskeySignInOptions']> {
  const { rpID } = relyingParty(ctx.config);
  // No allowCredentials: the person picks a discoverable passkey, which names its account (WebAuthn §5.5
  // allowCredentials: "If the list is empty … the client … [uses] discoverable credentials").
  const options = await generateAuthenticationOptions({ rpID, userVerification: 'preferred', timeout: CEREMONY_MS });
  const challenge = await ctx.store.passkeys.createChallenge('passkey-authentication', null, options.challenge, ctx.clock.now(), CEREMONY_MS);
  return { challengeId: challenge.id, options: options as unknown as Schemas['PasskeySignInOptions']['options'] };
}

/** What a passkey sign-in found: whose passkey it was (when one was found), and whether it verified. */
export type SignInOutcome = { ok: true; userId: string; passkeyId: string } | { ok: false; userId: string | undefined };

/**
 * Checks a sign-in's answer: the challenge (taken once, whatever follows),
 * the passkey it names, its signature and counter. Answers whose passkey it
 * was even when it fails, so that the failure counts against that account.
 */
export async function finishSignIn(ctx: Ports, body: Schemas['FinishPasskeySignInRequest']): Promise<SignInOutcome> {
  const now = ctx.clock.now();
  const response = body.response as unknown as AuthenticationResponseJSON;
  const challenge = await ctx.store.passkeys.takeChallenge('passkey-authentication', body.challengeId, now);
  const passkey = await ctx.store.passkeys.findByCredentialId(response.id);
  if (!challenge || !passkey) return { ok: false, userId: passkey?.userId };
  // WebAuthn §7.2 step 6: "If response.userHandle is present, … verify that the user account identified by
  // credential.id … [has] the same user handle". A mismatch is a credential presented for someone else.
  const userHandle = (response.response as { userHandle?: unknown }).userHandle;
  if (userHandle !== undefined && userHandle !== null && userHandle !== base64urlOf(userHandleOf(passkey.userId))) return { ok: false, userId: passkey.userId };
  const { rpID, origin } = relyingParty(ctx.config);
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: { id: passkey.credentialId, publicKey: bytesOf(passkey.publicKey), counter: passkey.counter, transports: passkey.transports },
      requireUserVerification: false,
    });
  } catch {
    // A malformed answer, a bad signature, a counter that went back: hostile input, refused like any failure.
    return { ok: false, userId: passkey.userId };
  }
  if (!verification.verified) return { ok: false, userId: passkey.userId };
  const { newCounter, credentialBackedUp } = verification.authenticationInfo;
  if (!(await ctx.store.passkeys.recordUse(passkey.id, newCounter, credentialBackedUp, now))) return { ok: false, userId: passkey.userId };
  return { ok: true, userId: passkey.userId, passkeyId: passkey.id };
}
