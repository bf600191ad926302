/**
 * Browser sessions of accounts: started by a sign-in of any kind (password,
 * passkey, single sign-on, the setup link, sign-up), listed and ended by
 * their person.
 *
 * The accounts rules: a session "is replaced on sign-in and whenever its privileges
 * change". A sign-in always makes a new session with a new secret and ends
 * the one the browser carried, so a session id planted in a browser before
 * sign-in (session fixation) never becomes a signed-in one.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { clearedSessionCookie, sessionCookie } from '../../auth/session-cookie.ts';
import { notFound } from '../../lib/problems.ts';
import { recordSecurityEvent } from '../account/security-events.ts';
import { reply, type Reply, type RequestFacts } from '../../lib/request-facts.ts';
import type { SessionRecord } from './session-repository.ts';
import type { Store } from '../../repositories.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config'>;

/** How the person proved who they are. */
export type SignInMethod = 'password' | 'passkey' | 'oidc' | 'setup' | 'signup' | 'reset';

/**
 * Starts a session for `userId`: a new row, the session the request carried (if any) ended; answers its cookie, and
 * that no cache on the way may store the response, for the handler to write with whatever body it sends.
 */
export async function startSession(ctx: Ports, facts: RequestFacts, userId: string, method: SignInMethod): Promise<Reply<{ id: string }>> {
  const now = ctx.clock.now();
  if (facts.session) await ctx.store.sessions.delete(facts.session.userId, facts.session.id);
  const { id, secret } = await ctx.store.sessions.create(userId, method, { userAgent: facts.userAgent ?? null, address: facts.address ?? null }, now);
  await recordSecurityEvent(ctx, { userId, kind: 'signin', facts, detail: method });
  // Responses that set a session must never be stored by a cache on the way.
  return reply({ id }, { cookies: [sessionCookie(ctx.config.publicUrl, secret, ctx.config.sessions.maxMs)], headers: { 'Cache-Control': 'no-store' } });
}

/** Ends the session the request carries; answers the cleared cookie. */
export async function endCurrentSession(ctx: Ports, facts: RequestFacts, caller: Caller): Promise<Reply<Record<string, never>>> {
  if (facts.session) {
    await ctx.store.sessions.delete(caller.id, facts.session.id);
    await recordSecurityEvent(ctx, { userId: caller.id, kind: 'signout', facts });
  }
  return clearSessionCookie(ctx);
}

/** Ends every session of an account, but `except` (the one the person is using, when they keep it). */
export async function endSessionsOf(ctx: Pick<Context, 'store'>, userId: string, options: { except?: string } = {}): Promise<number> {
  return ctx.store.sessions.deleteAllOf(userId, options.except);
}

/**
 * Ends every way into an account that was made before now, but `except` (the session the person is using, when they
 * keep it): its sessions, its personal tokens, its passkeys, and every app it let in, with the app's access and refresh
 * tokens. Issue 28 ("One door"): a new password takes the account back. Someone who made the account first with
 * another person's address (open registration), or who learnt the old password, must keep nothing once that person
 * resets or changes it: not a token, a passkey or an app's grant, each of which would otherwise outlive the password.
 * Run in the transaction that sets the new password, so that neither lands without the other.
 */
export async function endAccessOf(store: Pick<Store, 'sessions' | 'tokens' | 'passkeys' | 'oauth'>, userId: string, now: number, options: { except?: string } = {}): Promise<Schemas['EndedAccess']> {
  const ended = await store.sessions.deleteAllOf(userId, options.except);
  const tokens = await store.tokens.revokeAllPersonalOf(userId, now);
  const passkeys = await store.passkeys.removeAllOf(userId);
  const apps = await store.oauth.endGrantsOf(userId, now);
  return { ended, tokens, passkeys, apps };
}

/** What endAccessOf ended, for the security event: "2 sessions, 2 personal tokens, 1 passkey and 1 connected app ended". */
export function endedAccessInWords(ended: Schemas['EndedAccess'], sessions = 'session'): string {
  const counted = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;
  const parts = [counted(ended.ended, sessions), counted(ended.tokens, 'personal token'), counted(ended.passkeys, 'passkey'), counted(ended.apps, 'connected app')];
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)} ended`;
}

function sessionJson(ctx: Ports, session: SessionRecord, currentId: string | undefined): Schemas['Session'] {
  return {
    id: session.id,
    object: 'session',
    current: session.id === currentId,
    method: session.method as Schemas['Session']['method'],
    ...(session.userAgent !== null ? { userAgent: session.userAgent } : {}),
    ...(session.address !== null ? { address: session.address } : {}),
    timeCreated: session.timeCreated,
    timeLastSeen: session.timeLastSeen,
    expires: Math.min(session.timeLastSeen + ctx.config.sessions.idleMs, session.timeCreated + ctx.config.sessions.maxMs),
  };
}

export async function listSessions(ctx: Ports, caller: Caller, facts: RequestFacts): Promise<Schemas['Session'][]> {
  const sessions = await ctx.store.sessions.listOf(caller.id, ctx.clock.now(), ctx.config.sessions);
  return sessions.map((session) => sessionJson(ctx, session, facts.session?.id));
}

/** Ends one of the caller's sessions; when it is the one the request carries, answers its cookie cleared. */
export async function endSession(ctx: Ports, caller: Caller, facts: RequestFacts, sessionId: string): Promise<Reply<Record<string, never>>> {
  if (!(await ctx.store.sessions.delete(caller.id, sessionId))) throw notFound(`You have no session ${sessionId}; list yours with GET /me/sessions.`);
  await recordSecurityEvent(ctx, { userId: caller.id, kind: 'session-ended', facts, detail: sessionId });
  return sessionId === facts.session?.id ? clearSessionCookie(ctx) : reply({});
}

export async function endOtherSessions(ctx: Ports, caller: Caller, facts: RequestFacts): Promise<number> {
  const ended = await endSessionsOf(ctx, caller.id, { except: facts.session?.id });
  if (ended > 0) await recordSecurityEvent(ctx, { userId: caller.id, kind: 'session-ended', facts, detail: `${ended} other session(s)` });
  return ended;
}

/** The session cookie cleared, for a browser that has no valid session (signing out twice is no error). */
export function clearSessionCookie(ctx: Pick<Context, 'config'>): Reply<Record<string, never>> {
  return reply({}, { cookies: [clearedSessionCookie(ctx.config.publicUrl)] });
}
