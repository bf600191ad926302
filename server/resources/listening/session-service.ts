/**
 * Player sessions (openPlayerSession, closePlayerSession): a browser's
 * signed cookie on one player (listener-session.ts), opened with a
 * collaborator's invite link (once), the player's password (rate limited
 * per address and player), a display name, or the payment page's return
 * (a purchase).
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { forbidden, notFound } from '../../lib/problems.ts';
import { checkSameOrigin } from '../../auth/same-origin.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import type { Db } from '../../store/db.ts';
import type { PlayerRecord } from '../players/player-repository.ts';
import { verifyPassword } from '../players/player-password.ts';
import { inviteMatches } from '../players/invite-links.ts';
import { hasExpired, playerFacts } from './player-facts.ts';
import { decideEntry } from '../../auth/policy.ts';
import { listenerAccessOf, listenerSessions, readSession } from './listener.ts';
import { inviteInvalid, passwordIncorrect, playerExpired, playerLocked } from '../../http/listener-problems.ts';
import { LISTENER_SESSION_COOKIE, LISTENER_SESSION_TTL_MS, PURCHASE_SESSION_TTL_MS, listenerSessionCookie, newSessionId, passwordTag, renewedSession, type ListenerSession } from './listener-session.ts';
import { playerView, type RenderedView } from './view-service.ts';
import { claimCheckout } from './fulfilment.ts';
import { addressKey } from '../../lib/client-address.ts';
import { reply, type Reply, type RequestFacts } from '../../lib/request-facts.ts';

/**
 * Password attempts per address and player: 5 a minute. Enough for someone
 * who mistypes; a guesser gets 7,200 tries a day at most from one address,
 * and each costs them the scrypt check's time besides.
 */
export const PASSWORD_ATTEMPTS = { points: 5, durationSeconds: 60 };

const limiters = new WeakMap<Db, RateLimiterAbstract>();
function passwordLimiter(db: Db): RateLimiterAbstract {
  let limiter = limiters.get(db);
  if (!limiter) {
    limiter = db.rateLimiter({ keyPrefix: 'player-password', ...PASSWORD_ATTEMPTS });
    limiters.set(db, limiter);
  }
  return limiter;
}

/** Refuses (403) a session change that does not come from our own pages: another site must not sign a visitor in or out (login CSRF). */
export function requireSameOrigin(ctx: Pick<Context, 'config'>, facts: RequestFacts, what: string) {
  const verdict = checkSameOrigin({ 'sec-fetch-site': facts.secFetchSite, origin: facts.origin }, new URL(ctx.config.publicUrl).origin);
  if (!verdict.allowed) throw forbidden(`${what} only from the player's own page: this request was refused because ${verdict.reason}.`);
}

export async function playerToOpen(ctx: Context, playerId: string): Promise<PlayerRecord> {
  const player = await ctx.store.players.get(playerId);
  if (!player) throw notFound(`No player ${playerId} exists. Check that the link was copied whole.`);
  if (hasExpired(player, ctx.clock.now())) throw playerExpired(player.expires!);
  return player;
}

export async function openPlayerSession(
  ctx: Context,
  facts: RequestFacts,
  playerId: string,
  body: Schemas['PlayerSessionRequest'],
): Promise<Reply<RenderedView>> {
  requireSameOrigin(ctx, facts, 'Open a session');
  const player = await playerToOpen(ctx, playerId);
  const now = ctx.clock.now();
  // A session that exists keeps what it had and gains what is given; its day starts again.
  const existing = readSession(ctx, facts.cookies[LISTENER_SESSION_COOKIE], playerId, now);
  let session: ListenerSession = { ...(existing ?? { id: newSessionId() }), expires: now + LISTENER_SESSION_TTL_MS };
  // The id the session takes if this request gains it access (renewedSession: session fixation).
  const renewedId = newSessionId();
  let gained = false;

  if (body.invite !== undefined) {
    session.userId = await useInvite(ctx, player, body.invite, now);
    gained = true;
  }
  if (body.password !== undefined) {
    session.password = await checkPassword(ctx, facts, player, body.password);
    gained = true;
  }
  if (body.name !== undefined) session.name = body.name.trim();
  if (body.checkout !== undefined) {
    const purchase = await claimCheckout(ctx, player, session, body.checkout, renewedId);
    if (purchase) {
      session.purchaseId = purchase.id;
      gained = true;
    }
  }
  if (gained) session = renewedSession(session, renewedId);
  // A session that holds a purchase lasts as long as what was bought should: the purchase is checked again on every request anyway.
  const ttl = session.purchaseId ? PURCHASE_SESSION_TTL_MS : LISTENER_SESSION_TTL_MS;
  session.expires = now + ttl;

  // The view this session gives; a session that still does not open the player answers 401, and is not set.
  const view = await playerView(ctx, await listenerAccessOf(ctx, player, undefined, session));
  return reply(view, { cookies: [listenerSessionCookie(ctx.config, player.id, listenerSessions(ctx).issue(player.id, session), ttl)] });
}

/** The user the invite signs in (made now if the email has no account yet); the link is spent. */
async function useInvite(ctx: Context, player: PlayerRecord, token: string, now: number): Promise<string> {
  const invites = await ctx.store.players.invites(player.id);
  const invite = invites.find((candidate) => inviteMatches(ctx, player.id, candidate.email, candidate.nonce, token));
  // One statement records the use only if it is still unused: of two uses at once, one wins.
  if (!invite || invite.used !== null || !(await ctx.store.players.useInvite(player.id, invite.email, invite.nonce, now))) throw inviteInvalid();
  return (await ctx.store.users.findOrCreate(invite.email, now)).id;
}

/** The session's password tag, once the password is right; counted against the address's attempts first. */
async function checkPassword(ctx: Context, facts: RequestFacts, player: PlayerRecord, password: string): Promise<string> {
  // Whether a right password would open it at all is the policy's to say: not a player for collaborators only.
  const entry = decideEntry({ ...playerFacts(player), expired: false }, { passwordGiven: true, paid: false });
  if (!entry.allowed && entry.lock === 'collaborators') {
    throw playerLocked(player.id, 'collaborators', 'This player is for its invited collaborators only; a password does not open it. Use the invite link its owner sent you.');
  }
  if (player.passwordHash === null) throw passwordIncorrect('This player has no password: open it without one.');
  // Before the check, so a guesser pays for every attempt, right or wrong.
  await consumeOrRefuse(
    passwordLimiter(ctx.store.db),
    `${addressKey(facts.address ?? '')}|${player.id}`,
    (retryAfter) => `Too many password attempts on this player from your address: ${PASSWORD_ATTEMPTS.points} a minute. Retry after ${retryAfter} second(s).`,
  );
  if (!(await verifyPassword(password, player.passwordHash))) throw passwordIncorrect();
  return passwordTag(player.passwordHash);
}

export async function closePlayerSession(ctx: Context, facts: RequestFacts, playerId: string): Promise<Reply<Record<string, never>>> {
  requireSameOrigin(ctx, facts, 'Close a session');
  if (!(await ctx.store.players.get(playerId))) throw notFound(`No player ${playerId} exists. Check that the link was copied whole.`);
  // RFC 6265 §5.2.2, Max-Age: "If delta-seconds is less than or equal to zero (0), let expiry-time be the earliest representable date and time."
  return reply({}, { cookies: [listenerSessionCookie(ctx.config, playerId, '', 0)] });
}
