/**
 * Passkeys (WebAuthn Level 3), with @simplewebauthn/server: an account adds,
 * names, lists and removes its own; anyone may sign in with one, naming no
 * account (the credential is discoverable, and names it).
 *
 * The accounts rules: "The relying party is PUBLIC_URL's host name." The origin the
 * browser must report is PUBLIC_URL's origin. Both are read per call, not
 * at start: a server on port 0 learns its URL only once it listens.
 *
 * Each ceremony's challenge is stored (auth_challenges) for 5 minutes and
 * taken once, so that any API process can finish what another began and a
 * replayed answer finds nothing.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { newId } from '../../lib/ids.ts';
import { badRequest, conflict, HttpProblem, notFound } from '../../lib/problems.ts';
import { attemptLimitsOf } from '../../auth/attempt-limits.ts';
import { normalizeEmail } from '../account/user-repository.ts';
import { userJson } from '../account/account-service.ts';
import { recordSecurityEvent } from '../account/security-events.ts';
import type { Reply, RequestFacts } from '../../lib/request-facts.ts';
import { startSession } from '../sessions/session-service.ts';
import { requireOwnPages } from '../sessions/sign-up-service.ts';
import type { PasskeyRecord } from './passkey-repository.ts';
import { actorOf, authorize, can } from '../../auth/authorize.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config'>;

/**
 * @simplewebauthn/server (with its ASN.1 and certificate packages, about 250 modules), loaded at the first passkey
 * ceremony, not at start: a server whose people sign in with passwords never pays its memory.
 */
const webauthn = () => import('@simplewebauthn/server');

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
  const options = await (await webauthn()).generateRegistrationOptions({
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

export async function addPasskey(ctx: Ports, facts: RequestFacts, caller: Caller, body: Schemas['AddPasskeyRequest']): Promise<Schemas['Passkey']> {
  const now = ctx.clock.now();
  const challenge = await ctx.store.passkeys.takeChallenge('passkey-registration', body.challengeId, now);
  // A ceremony is its account's own (the policy's account:own): another account's challenge is no more use than an unknown one.
  if (!challenge || !can(actorOf(caller, undefined), { permission: 'account:own', thing: { kind: 'ceremony', id: body.challengeId, ownerId: challenge.userId ?? '' } })) throw ceremonyGone();
  const { rpID, origin } = relyingParty(ctx.config);
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await (await webauthn()).verifyRegistrationResponse({
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
  await recordSecurityEvent(ctx, { userId: caller.id, kind: 'passkey-added', facts, detail: passkey.name });
  return passkeyJson(passkey);
}

export async function renamePasskey(ctx: Ports, caller: Caller, passkeyId: string, body: Schemas['RenamePasskeyRequest']): Promise<Schemas['Passkey']> {
  if (!(await ctx.store.passkeys.rename(caller.id, passkeyId, body.name.trim()))) throw notFound(`You have no passkey ${passkeyId}.`);
  return passkeyJson((await ctx.store.passkeys.get(passkeyId))!);
}

/** Removes one of the caller's passkeys: from then on it signs nobody in. */
export async function removePasskey(ctx: Ports, facts: RequestFacts, caller: Caller, passkeyId: string): Promise<void> {
  const passkey = await ctx.store.passkeys.get(passkeyId);
  authorize(actorOf(caller, undefined), { permission: 'account:own', thing: { kind: 'passkey', id: passkeyId, ownerId: passkey?.userId ?? '' } });
  if (!(await ctx.store.passkeys.remove(caller.id, passkeyId))) throw notFound(`You have no passkey ${passkeyId}.`);
  // authorize refused a passkey that is not the caller's, a missing one included.
  await recordSecurityEvent(ctx, { userId: caller.id, kind: 'passkey-removed', facts, detail: passkey!.name });
}

export async function startSignIn(ctx: Ports): Promise<Schemas['PasskeySignInOptions']> {
  const { rpID } = relyingParty(ctx.config);
  // No allowCredentials: the person picks a discoverable passkey, which names its account (WebAuthn §5.5
  // allowCredentials: "If the list is empty … the client … [uses] discoverable credentials").
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID, userVerification: 'preferred', timeout: CEREMONY_MS });
  const challenge = await ctx.store.passkeys.createChallenge('passkey-authentication', null, options.challenge, ctx.clock.now(), CEREMONY_MS);
  return { challengeId: challenge.id, options: options as unknown as Schemas['PasskeySignInOptions']['options'] };
}

/**
 * Signs in with a passkey: checks the answer (the challenge, taken once
 * whatever follows; the passkey it names; its user handle, signature and
 * counter) and starts a session whose method is `passkey`. Every failure
 * gets one answer; it counts against the address, and against the account
 * when the answer named one of its passkeys (the accounts rules: "sign-in, sign-up,
 * reset and passkey attempts are limited per account (at most 10 failures
 * in 15 minutes) and per address (at most 30)"). The account's count is
 * the one its password sign-ins use (its email), so that switching method
 * buys no more guesses.
 */
export async function finishSignIn(ctx: Ports, facts: RequestFacts, body: Schemas['FinishPasskeySignInRequest']): Promise<Reply<Schemas['User']>> {
  // Login CSRF: a page of another site must not sign its visitor in to an account of the site's choosing.
  requireOwnPages(ctx, facts);
  const address = facts.address ?? 'unknown';
  const response = body.response as unknown as AuthenticationResponseJSON;
  // The account is known before anything secret is checked (a credential id names a passkey, and proves nothing), so
  // that the attempt can take its point from the account's count and the address's at once, before the signature is
  // verified (attempt-limits.ts): answers sent at once cannot all be checked against a count none has added to yet.
  const passkey = await ctx.store.passkeys.findByCredentialId(response.id);
  const found = passkey && (await ctx.store.users.get(passkey.userId));
  const attempt = { account: found ? normalizeEmail(found.email) : undefined, address };
  const user = await attemptLimitsOf(ctx.store.db).attempt(attempt, async (reservation) => {
    const now = ctx.clock.now();
    const challenge = await ctx.store.passkeys.takeChallenge('passkey-authentication', body.challengeId, now);
    if (!challenge || !passkey || !found || !(await verified(ctx, passkey, challenge.challenge, response, now))) {
      reservation.failed();
      if (found) await recordSecurityEvent(ctx, { userId: found.id, kind: 'signin-failed', facts, detail: 'passkey' });
      throw passkeySignInRefused();
    }
    if (found.disabled) throw new HttpProblem('unauthorized', "This account is disabled. Ask the server's administrator.");
    await reservation.succeeded();
    return found;
  });
  // The session records how, and when, the person proved who they are: DELETE /me takes a passkey sign-in of the last
  // five minutes in place of the password.
  return { ...(await startSession(ctx, facts, user.id, 'passkey')), body: userJson(user) };
}

/** Whether the answer is the passkey's signature of the challenge; if so, its use is recorded (the counter only moves forward). */
async function verified(ctx: Ports, passkey: PasskeyRecord, expectedChallenge: string, response: AuthenticationResponseJSON, now: number): Promise<boolean> {
  // WebAuthn §7.2 step 6: "If response.userHandle is present, … verify that the user account identified by
  // credential.id … [has] the same user handle". A mismatch is a credential presented for someone else.
  const userHandle = (response.response as { userHandle?: unknown } | undefined)?.userHandle;
  if (userHandle !== undefined && userHandle !== null && userHandle !== base64urlOf(userHandleOf(passkey.userId))) return false;
  const { rpID, origin } = relyingParty(ctx.config);
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: { id: passkey.credentialId, publicKey: bytesOf(passkey.publicKey), counter: passkey.counter, transports: passkey.transports },
      requireUserVerification: false,
    });
  } catch {
    // A malformed answer, a bad signature, a counter that went back: hostile input, refused like any failure.
    return false;
  }
  if (!verification.verified) return false;
  const { newCounter, credentialBackedUp } = verification.authenticationInfo;
  return ctx.store.passkeys.recordUse(passkey.id, newCounter, credentialBackedUp, now);
}
