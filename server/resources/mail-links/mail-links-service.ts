/**
 * What is done by mail (the accounts rules, "Email" and "Password reset"): a password
 * reset and the verification of an account's email address, each through a
 * single-use link (one_time_links, its secret kept only as a hash) mailed
 * from the job queue (resources/mail/). Without mail (no SMTP_URL) the
 * operator prints reset links with the admin CLI (`createResetLink`).
 */
import type { RequestFacts } from '../../lib/request-facts.ts';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context } from '../../context.ts';
import type { Caller } from '../../auth/access.ts';
import { attemptLimitsOf } from '../../auth/attempt-limits.ts';
import { hashPassword, requireGoodPassword } from '../../auth/passwords.ts';
import { conflict, HttpProblem } from '../../lib/problems.ts';
import type { Store } from '../../repositories.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { passwordResetMail, verifyEmailMail } from '../../mail/templates.ts';
import { normalizeEmail, type UserRecord } from '../account/user-repository.ts';
import { recordSecurityEvent } from '../account/security-events.ts';
import { endAccessOf, endedAccessInWords } from '../sessions/session-service.ts';
import { queueMail } from '../mail/mail-outbox.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import type { Db } from '../../store/db.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'secrets' | 'jobQueued'>;

/** The accounts rules: the reset mail is "a single-use link valid for an hour". */
export const RESET_LINK_TTL_MS = 3_600_000;
/** Long enough to find the mail a day later. */
export const VERIFY_LINK_TTL_MS = 2 * 24 * 3_600_000;
/**
 * At most this many mails of each kind to one account an hour: the reset
 * form takes any address, and must not become a way to fill someone's
 * inbox in the server's name.
 */
export const MAILS_PER_HOUR = 3;
const HOUR_SECONDS = 3_600;

/**
 * The counters of MAILS_PER_HOUR, one per kind of mail: reset mails by
 * the address asked for (known or not), verification mails by account.
 * A mail takes its point (one atomic upsert) before its link is made, so
 * that requests sent at once cannot all count the links made so far, find
 * fewer than three, and all send one (11 reset requests at once sent 5
 * mails on PostgreSQL, whose transactions do not see each other's new
 * links). A refused mail's point is not given back: the count is of mails
 * asked for, and the cap is reached sooner, never later.
 */
const mailCaps = new WeakMap<Db, Record<'reset' | 'verify', RateLimiterAbstract>>();
export function mailCapsOf(db: Db): Record<'reset' | 'verify', RateLimiterAbstract> {
  let caps = mailCaps.get(db);
  if (!caps) {
    caps = {
      reset: db.rateLimiter({ keyPrefix: 'mail-reset', points: MAILS_PER_HOUR, durationSeconds: HOUR_SECONDS }),
      verify: db.rateLimiter({ keyPrefix: 'mail-verify', points: MAILS_PER_HOUR, durationSeconds: HOUR_SECONDS }),
    };
    mailCaps.set(db, caps);
  }
  return caps;
}

const resetUrl = (ctx: Pick<Context, 'config'>, secret: string) => `${ctx.config.publicUrl}/reset-password?token=${encodeURIComponent(secret)}`;
const verifyUrl = (ctx: Pick<Context, 'config'>, secret: string) => `${ctx.config.publicUrl}/verify-email?token=${encodeURIComponent(secret)}`;

const linkInvalid = () => new HttpProblem('link-invalid', 'This link does not work: it was used already, replaced by a newer one, or has expired. Ask for a new one.');

function mailNotConfigured(what: string): HttpProblem {
  return new HttpProblem('mail-not-configured', `This server sends no mail, so it cannot mail ${what}. Ask its operator for a link: npm run --silent admin -- user reset-link --email you@example.com`);
}

const addressOf = (facts: RequestFacts) => ({ address: facts.address ?? 'unknown' });

/**
 * Answers at once, the same for every address; the link is made and its
 * mail queued after the answer, so that neither the answer nor its time
 * tells whether an account has the address. An address over its limit of
 * failed attempts (sign-ins, guessed links) is refused here too; a request
 * is no failure itself (it proves nothing either way), and what it can
 * cost someone else is capped: MAILS_PER_HOUR to one address. It never
 * counts against the account: asking for resets of someone's address must
 * not lock them out of signing in.
 */
export async function requestPasswordReset(ctx: Ports, facts: RequestFacts, email: string): Promise<void> {
  if (!ctx.config.mail) throw mailNotConfigured('a reset link');
  // No secret is tried here, but an address that has used up its failures (guessed links, sign-ins) is refused here
  // too: the check takes a point and gives it straight back.
  await attemptLimitsOf(ctx.store.db).attempt(addressOf(facts), async () => {});
  const to = normalizeEmail(email);
  // The mail's point is taken before the answer, for every address alike (one upsert, account or none), so that 11
  // requests sent at once have all been counted when they are answered, and at most MAILS_PER_HOUR of them mail.
  const allowed = await tookPoint(mailCapsOf(ctx.store.db).reset, to);
  void mailResetLink(ctx, to, allowed).catch((error: unknown) => ctx.logger.error('queuing a password reset mail failed', { err: error }));
}

/** Takes one of the key's points: false when it has none left (a RateLimiterRes refusal); a fault is thrown. */
async function tookPoint(counters: RateLimiterAbstract, key: string): Promise<boolean> {
  try {
    await counters.consume(key);
    return true;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) return false;
    throw refusal;
  }
}

async function mailResetLink(ctx: Ports, email: string, allowed: boolean): Promise<void> {
  const user = await ctx.store.users.findByEmail(email);
  if (!user || user.disabled) return;
  if (!allowed) {
    ctx.logger.info('password reset mail not sent: the address had its hourly share', { userId: user.id });
    return;
  }
  await ctx.store.transaction(async (store) => {
    const now = ctx.clock.now();
    const link = await newResetLink(store, user, now);
    await queueMail(ctx, store, 'password-reset', passwordResetMail({ to: user.email, name: user.name ?? '', url: resetUrl(ctx, link.secret), validForMs: RESET_LINK_TTL_MS }));
  });
}

const newResetLink = (store: Store, user: UserRecord, now: number) => store.oneTimeLinks.create('reset', { userId: user.id, email: user.email, ttlMs: RESET_LINK_TTL_MS }, now);

/** The admin CLI's reset link for an account, mail or no mail; undefined when no account has the address. */
export async function createResetLink(ctx: Pick<Context, 'store' | 'clock' | 'config'>, email: string): Promise<{ url: string; expires: number; email: string } | undefined> {
  const user = await ctx.store.users.findByEmail(email);
  if (!user) return undefined;
  const link = await newResetLink(ctx.store, user, ctx.clock.now());
  return { url: resetUrl(ctx, link.secret), expires: link.expires, email: user.email };
}

export async function completePasswordReset(ctx: Ports, facts: RequestFacts, body: { token: string; password: string }): Promise<Schemas['EndedAccess']> {
  // The token is a secret: the attempt takes its point before the link is looked up, and gives it back when the link
  // works (attempt-limits.ts), so that guesses sent at once are counted as they are made.
  const { user, ended } = await attemptLimitsOf(ctx.store.db).attempt(addressOf(facts), async (reservation) => {
    const link = await ctx.store.oneTimeLinks.peek('reset', body.token, ctx.clock.now());
    const owner = link?.userId ? await ctx.store.users.get(link.userId) : undefined;
    // A link mailed to an address the account no longer has is dead.
    if (!link || !owner || owner.email !== link.email) {
      reservation.failed();
      throw linkInvalid();
    }
    // Checked before the link is used, so that a refused password leaves the link to try again (and the attempt's point:
    // the token was right).
    requireGoodPassword(body.password, 'password', [owner.email, owner.email.split('@')[0], owner.name ?? '', 'audioshare', 'audio-share', 'audio share']);
    const passwordHash = await hashPassword(body.password);
    const endedAccess = await ctx.store.transaction(async (store) => {
      const now = ctx.clock.now();
      if (!(await store.oneTimeLinks.consume('reset', body.token, now))) return undefined;
      await store.users.setPasswordHash(owner.id, passwordHash);
      // The link was mailed to the address: using it shows the account receives mail there.
      await store.users.setEmailVerified(owner.id);
      // Every other reset link of the account dies with this one.
      await store.oneTimeLinks.revokeAll('reset', owner.id, now);
      // The accounts rules: the reset page "ends every session of the account". Issue 28: and every personal token,
      // passkey and app's grant made before it. The address is verified above, so the players shared with it open to
      // this account now: whoever made it first with this address (open registration) must keep no way in.
      return endAccessOf(store, owner.id, now);
    });
    if (endedAccess === undefined) {
      reservation.failed();
      throw linkInvalid();
    }
    // Proving the address clears the failed sign-ins that may have sent them here.
    await reservation.succeeded(owner.email);
    return { user: owner, ended: endedAccess };
  });
  await recordSecurityEvent(ctx, { userId: user.id, kind: 'password-reset', facts, detail: endedAccessInWords(ended) });
  return ended;
}

export async function sendEmailVerification(ctx: Ports, caller: Caller): Promise<Record<string, never>> {
  if (!ctx.config.mail) throw mailNotConfigured('a verification link');
  const user = await ctx.store.users.get(caller.id);
  if (!user) throw new HttpProblem('unauthorized', 'This account no longer exists.');
  if (user.emailVerified) throw conflict(`Your email address ${user.email} is verified already.`);
  await consumeOrRefuse(
    mailCapsOf(ctx.store.db).verify,
    user.id,
    (retryAfter) => `At most ${MAILS_PER_HOUR} verification mails an hour: look for the last one (and in the spam folder), or ask again in ${Math.ceil(retryAfter / 60)} minute(s).`,
  );
  await ctx.store.transaction(async (store) => {
    const now = ctx.clock.now();
    const link = await store.oneTimeLinks.create('verify', { userId: user.id, email: user.email, ttlMs: VERIFY_LINK_TTL_MS }, now);
    await queueMail(ctx, store, 'verify-email', verifyEmailMail({ to: user.email, name: user.name ?? '', url: verifyUrl(ctx, link.secret), validForMs: VERIFY_LINK_TTL_MS }));
  });
  return {};
}

export async function verifyEmail(ctx: Ports, facts: RequestFacts, token: string): Promise<Record<string, never>> {
  // The token is a secret, guessed like a reset token: reserved before it is tried, given back when it works.
  const verified = await attemptLimitsOf(ctx.store.db).attempt(addressOf(facts), async (reservation) => {
    const user = await ctx.store.transaction(async (store) => {
      const link = await store.oneTimeLinks.consume('verify', token, ctx.clock.now());
      const owner = link?.userId ? await store.users.get(link.userId) : undefined;
      // Mailed to an address the account has since changed: it proves nothing about the one it has now.
      if (!link || !owner || owner.email !== link.email) return undefined;
      await store.users.setEmailVerified(owner.id);
      return owner;
    });
    if (!user) {
      reservation.failed();
      throw linkInvalid();
    }
    await reservation.succeeded();
    return user;
  });
  await recordSecurityEvent(ctx, { userId: verified.id, kind: 'email-verified', facts, detail: verified.email });
  return {};
}
