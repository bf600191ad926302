/**
 * How accounts come to be and prove who they are with a password: the first
 * account (the setup link), sign-up (as REGISTRATION says), sign-in, and a
 * change of password.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { checkSameOrigin } from '../../auth/same-origin.ts';
import { attemptLimitsOf } from '../../auth/attempt-limits.ts';
import { hashPassword, requireGoodPassword, verifyPassword } from '../../auth/passwords.ts';
import { conflict, forbidden, HttpProblem } from '../../lib/problems.ts';
import { normalizeEmail } from '../account/user-repository.ts';
import { userJson } from '../account/account-service.ts';
import { recordSecurityEvent } from '../account/security-events.ts';
import { reply, type Reply, type RequestFacts } from '../../lib/request-facts.ts';
import { startSession, endAccessOf, endedAccessInWords } from './session-service.ts';
import { acceptInvitation, joinCollaboratorInvitation, type Invitation } from './invitations.ts';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../../store/db.ts';
import { finishSignUpMail, signUpAttemptMail } from '../../mail/templates.ts';
import { queueMail } from '../mail/mail-outbox.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'secrets' | 'jobQueued'>;

/** The words a password must not be made of, besides the common list: the person's own and the service's name. */
const passwordContext = (email: string, name: string) => [email, email.split('@')[0], name, 'audioshare', 'audio-share', 'audio share'];

/**
 * Sign-in and sign-up set a session cookie: a page of another site must not
 * be able to sign a visitor in to an account of its choosing (login CSRF),
 * so these come only from this server's own pages.
 */
export function requireOwnPages(ctx: Pick<Context, 'config'>, facts: RequestFacts): void {
  const verdict = checkSameOrigin({ 'sec-fetch-site': facts.secFetchSite, origin: facts.origin }, new URL(ctx.config.publicUrl).origin);
  if (!verdict.allowed) throw forbidden(`Signing in and signing up are taken only from this server's own pages, and ${verdict.reason}. Apps use bearer tokens instead.`);
}

const attemptOf = (facts: RequestFacts, email?: string) => ({ account: email === undefined ? undefined : normalizeEmail(email), address: facts.address ?? 'unknown' });

export async function getAuthConfig(ctx: Ports): Promise<Schemas['AuthConfig']> {
  return {
    registration: ctx.config.registration,
    setupRequired: !(await ctx.store.users.any()),
    mail: ctx.config.mail !== undefined,
    // The sign-in page's button "Sign in with <OIDC_NAME>", which starts at /auth/oidc/start.
    ...(ctx.config.oidc ? { sso: { name: ctx.config.oidc.name } } : {}),
  };
}

export async function createFirstAccount(ctx: Ports, facts: RequestFacts, body: Schemas['CreateFirstAccountRequest']): Promise<Reply<Schemas['User']>> {
  requireOwnPages(ctx, facts);
  // The setup token is a secret: its attempt is reserved before it is tried, and given back when it works (attempt-limits.ts).
  const user = await attemptLimitsOf(ctx.store.db).attempt(attemptOf(facts), async (reservation) => {
    requireGoodPassword(body.password, 'password', passwordContext(body.email, body.name));
    const passwordHash = await hashPassword(body.password);
    const made = await ctx.store.transaction(async (store) => {
      const now = ctx.clock.now();
      const link = await store.oneTimeLinks.consume('setup', body.token, now);
      if (!link) return undefined;
      // The link is for a server with no account; one made meanwhile (by the admin CLI) closes it.
      if (await store.users.any()) throw conflict('This server has an account already, so there is nothing to set up. Sign in, or ask its administrator for an invitation.');
      return (await store.users.create({ email: body.email, name: body.name.trim(), passwordHash, emailVerified: false, isAdmin: true }, now))!;
    });
    // Settled after the transaction, never inside it: the counters write through the store's own connection (on SQLite
    // they would wait for the transaction's own lock).
    if (!made) {
      reservation.failed();
      throw forbidden('This setup link is not valid: it was used already, replaced by a newer one, or has expired. Print a new one with: npm run --silent admin -- setup-link');
    }
    await reservation.succeeded();
    return made;
  });
  await recordSecurityEvent(ctx, { userId: user.id, kind: 'account-created', facts, detail: 'setup link: administrator' });
  return { ...(await startSession(ctx, facts, user.id, 'setup')), body: userJson(user) };
}

/** What a sign-up answers: the account, signed in (200, with its session's cookie), or word that it goes on by mail (202). */
export type SignUpAnswer = { status: 200; body: Schemas['User'] } | { status: 202; body: Schemas['SignUpByMail'] };

/** How long open registration's mailed link to finish a sign-up works. */
export const SIGN_UP_LINK_TTL_MS = 2 * 24 * 3_600_000;
/** At most this many sign-up mails (a link to finish, or word of an attempt) to one address an hour. */
export const SIGN_UP_MAILS_PER_HOUR = 3;

const signUpMailCaps = new WeakMap<Db, RateLimiterAbstract>();
function signUpMailCap(db: Db): RateLimiterAbstract {
  let cap = signUpMailCaps.get(db);
  if (!cap) {
    cap = db.rateLimiter({ keyPrefix: 'mail-signup', points: SIGN_UP_MAILS_PER_HOUR, durationSeconds: 3_600 });
    signUpMailCaps.set(db, cap);
  }
  return cap;
}

export async function signUp(ctx: Ports, facts: RequestFacts, body: Schemas['SignUpRequest']): Promise<Reply<SignUpAnswer>> {
  requireOwnPages(ctx, facts);
  // These answers are the same for every address: they tell nothing, and cost nothing to give.
  if (ctx.config.registration === 'closed') throw forbidden('Nobody signs up on this server: its administrators create accounts. Ask one, or sign in if you have an account.');
  if (ctx.config.registration === 'invite' && body.invite === undefined) {
    throw forbidden('Sign-up on this server is by invitation: open the link of the invitation you were sent, or ask an administrator for one. If you have an account, sign in.');
  }
  // Every sign-up takes one of the address's attempts (its limit: 30 in 15 minutes), before the password is hashed.
  return attemptLimitsOf(ctx.store.db).attempt(attemptOf(facts), async (reservation) => {
    requireGoodPassword(body.password, 'password', passwordContext(body.email, body.name));
    // Hashed whatever follows, taken address or free: the answer's time must not tell them apart.
    const passwordHash = await hashPassword(body.password);
    if (body.invite === undefined && ctx.config.mail) {
      // Counted whatever the address, so that running out of attempts tells nothing either.
      reservation.failed();
      return reply(await signUpByMail(ctx, body.email));
    }
    const made = await ctx.store.transaction(async (store) => {
      const now = ctx.clock.now();
      let invitation: Invitation | undefined;
      if (body.invite !== undefined) {
        invitation = await acceptInvitation({ ...ctx, store }, body.invite, body.email, now);
        if (!invitation) return { refused: true as const };
      }
      const created = await store.users.create(
        { email: body.email, name: body.name.trim(), passwordHash, emailVerified: invitation !== undefined, isAdmin: invitation?.admin ?? false },
        now,
      );
      // Thrown inside, so that the transaction rolls back the invitation's use: it still works, for signing in.
      if (!created) throw new TakenAddress();
      return { refused: false as const, user: created, invitation };
    }).catch((error: unknown) => {
      if (error instanceof TakenAddress) return { refused: false as const, user: undefined, invitation: undefined };
      throw error;
    });
    if (made.refused) {
      reservation.failed();
      throw forbidden(
        `This invitation does not work for ${normalizeEmail(body.email)}: it was used already, renewed, withdrawn or has expired, or it was made for another address. Sign up with the address the invitation was sent to, or ask for a new one.`,
      );
    }
    if (!made.user) {
      // Said only to someone holding an invitation for the address (or on a server without mail, which has no other
      // way to say it); it counts against the address as a failure.
      reservation.failed();
      throw conflict(
        body.invite?.includes('.')
          ? `An account with the email ${normalizeEmail(body.email)} exists already. Sign in with it from the invitation's page (its "Sign in" link), and the invitation's access joins that account.`
          : `An account with the email ${normalizeEmail(body.email)} exists already. Sign in instead, or reset its password.`,
      );
    }
    // An invitation proves the address: the attempt is given back.
    if (made.invitation) await reservation.succeeded();
    await recordSecurityEvent(ctx, { userId: made.user.id, kind: 'account-created', facts, detail: made.invitation ? `invitation (${made.invitation.kind})` : 'open registration' });
    const session = await startSession(ctx, facts, made.user.id, 'signup');
    return { ...session, body: { status: 200 as const, body: userJson(made.user) } };
  });
}

class TakenAddress extends Error {}

/**
 * Open registration on a server that sends mail: the same answer for every
 * address (the accounts rules' enumeration resistance; OWASP Authentication
 * Cheat Sheet, account creation: "A link to activate your account has been
 * emailed to <input email address>"), and the difference goes by mail to
 * the address itself: a link to finish the sign-up (an invitation for the
 * address, which proves it) when it has no account, word of the attempt
 * when it has one. No account is made until the link is opened, so an
 * address cannot be taken by someone who does not read its mail. The
 * mail's point is taken before the answer, for every address alike; the
 * lookup and the mail come after it.
 */
async function signUpByMail(ctx: Ports, email: string): Promise<SignUpAnswer> {
  const to = normalizeEmail(email);
  let allowed = true;
  try {
    await signUpMailCap(ctx.store.db).consume(to);
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    allowed = false;
  }
  if (allowed) void mailSignUp(ctx, to).catch((error: unknown) => ctx.logger.error('queuing a sign-up mail failed', { err: error }));
  else ctx.logger.info('sign-up mail not sent: the address had its hourly share');
  return { status: 202, body: { email: to } };
}

async function mailSignUp(ctx: Ports, email: string): Promise<void> {
  await ctx.store.transaction(async (store) => {
    const now = ctx.clock.now();
    const user = await store.users.findByEmail(email);
    if (user) {
      await queueMail(ctx, store, 'sign-up-attempt', signUpAttemptMail({ to: user.email, name: user.name ?? '', signInUrl: `${ctx.config.publicUrl}/signin` }));
      return;
    }
    const link = await store.oneTimeLinks.create('invitation', { email, data: { admin: false, signUp: true }, ttlMs: SIGN_UP_LINK_TTL_MS }, now);
    const url = `${ctx.config.publicUrl}/signup?invite=${encodeURIComponent(link.secret)}`;
    await queueMail(ctx, store, 'sign-up', finishSignUpMail({ to: email, url, validForMs: SIGN_UP_LINK_TTL_MS }));
  });
}

export async function signIn(ctx: Ports, facts: RequestFacts, body: Schemas['SignInRequest']): Promise<Reply<Schemas['User']>> {
  requireOwnPages(ctx, facts);
  // The accounts rules: "at most 10 failures in 15 minutes" per account and 30 per address. The attempt takes its point
  // before argon2 runs, so that 40 sent at once get 10 verifications, not 40 (attempt-limits.ts).
  const user = await attemptLimitsOf(ctx.store.db).attempt(attemptOf(facts, body.email), async (reservation) => {
    const found = await ctx.store.users.findByEmail(body.email);
    // verifyPassword spends an argon2 verification even without an account, so that the answer's time does not tell.
    const matches = await verifyPassword(found?.passwordHash ?? null, body.password);
    // The spec's signIn: "A disabled account gets this same answer whether or not the password is right, and it counts
    // as a failed attempt". A password can be guessed: were its being right on a disabled account answered otherwise (a
    // text of its own, a point given back), each guess would be told whether it is the password, one that may open the
    // person's accounts elsewhere. Only the security event, which the account alone reads, says which it was.
    if (!found || !matches || found.disabled) {
      reservation.failed();
      if (found) await recordSecurityEvent(ctx, { userId: found.id, kind: 'signin-failed', facts, detail: matches ? 'password (right, but the account is disabled)' : 'password' });
      throw new HttpProblem('unauthorized', 'The email or the password is wrong. Try again, or reset your password.');
    }
    await reservation.succeeded();
    return found;
  });
  if (body.invite !== undefined && !(await joinCollaboratorInvitation(ctx, body.invite, user))) {
    throw forbidden('Your password is right, but this invitation does not work: it was used already, renewed or withdrawn. Sign in without it, or ask for a new one.');
  }
  return { ...(await startSession(ctx, facts, user.id, 'password')), body: userJson(user) };
}

export async function changePassword(ctx: Ports, facts: RequestFacts, caller: Caller, body: Schemas['ChangePasswordRequest']): Promise<Schemas['EndedAccess']> {
  const attempt = { account: normalizeEmail(caller.email), address: facts.address ?? 'unknown' };
  // The current password is a secret guessed like a sign-in's (a session left open must not be a way to learn it): it
  // counts against the same account and address.
  const user = await attemptLimitsOf(ctx.store.db).attempt(attempt, async (reservation) => {
    const found = (await ctx.store.users.get(caller.id))!;
    if (found.passwordHash === null) {
      throw forbidden('This account has no password yet (it signs in with single sign-on or a passkey, or was made from the shell): set one with "Forgot your password?" on the sign-in page.');
    }
    if (!(await verifyPassword(found.passwordHash, body.currentPassword))) {
      reservation.failed();
      throw new HttpProblem('validation-error', 'The current password is wrong.', { errors: [{ pointer: '/currentPassword', detail: 'The current password is wrong.' }] });
    }
    await reservation.succeeded();
    return found;
  });
  requireGoodPassword(body.newPassword, 'newPassword', passwordContext(user.email, user.name ?? ''));
  const passwordHash = await hashPassword(body.newPassword);
  // The accounts rules: "Changing it asks for the current one and ends every other session." Issue 28: and every
  // personal token, passkey and app's grant made before it, so that whoever learnt the old password keeps nothing.
  const ended = await ctx.store.transaction(async (store) => {
    await store.users.setPasswordHash(user.id, passwordHash);
    return endAccessOf(store, user.id, ctx.clock.now(), { except: facts.session?.id });
  });
  await recordSecurityEvent(ctx, { userId: user.id, kind: 'password-changed', facts, detail: endedAccessInWords(ended, 'other session') });
  return ended;
}
