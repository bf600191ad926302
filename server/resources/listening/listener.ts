/**
 * Who is on the other end of a listener operation (the view, the session,
 * comments on a player), and what the access policy lets them do there: the
 * one place the listener operations resolve a request into a principal, as
 * `accessProject` is for the API's. Every player-scoped handler starts here.
 *
 * The principal comes from, in this order: a bearer token (a project member,
 * by role), the player's session cookie (an invited collaborator, a password
 * session, a purchaser, a listener with a display name), or nothing (anyone
 * with the link).
 */
import type { Context } from '../../context.ts';
import type { PlayerRecord } from '../players/player-repository.ts';
import { canOnProject, decideEntry, playerPermissions, type PlayerPermission, type Principal } from '../../auth/policy.ts';
import { hasExpired, playerFacts } from './player-facts.ts';
import { notFound } from '../../lib/problems.ts';
import type { Caller } from '../../auth/access.ts';
import type { RequestFacts } from '../../lib/request-facts.ts';
import { LISTENER_SESSION_COOKIE, ListenerSessionSigner, passwordTag, type ListenerSession } from './listener-session.ts';
import { entryRefused } from '../../http/listener-problems.ts';
import { playerTrackGroups } from './player-tracks.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import type { UserRecord } from '../account/user-repository.ts';

export interface Listener {
  player: PlayerRecord;
  principal: Principal;
  /** What the policy grants this principal on this player now (player:view, :stream, :download, :comment). */
  permissions: ReadonlySet<PlayerPermission>;
  /** The API user behind a bearer token or a collaborator's session; absent for anonymous listeners. */
  userId?: string;
  /** The player session's id, when a session cookie opened this request: what listener writes are attributed to and rate limited by. */
  sessionId?: string;
  /** The ids the session had before it was renewed (session fixation): its comments under them are still its own. */
  formerSessionIds?: string[];
  /** The purchase this listener's session made, when it is a purchaser (on a `customer` paywall, bound into the view's signed URLs). */
  purchaseId?: string;
  /** The display name comments are posted under: the user's name, or the name given to the session. */
  displayName?: string;
  /** A member whose role can write the player's project: may pin, complete and delete any comment. */
  canModerate: boolean;
  /** The ids of the file boxes (versions) this player shows this listener, under its scope and `stacks` rule. */
  fileIds: ReadonlySet<string>;
  /** Every box of the player's project, as read to resolve the listener. */
  projectBoxes: BoxRecord[];
}

/**
 * Who the listener is and what they may do, without the player's files: what
 * the view needs, which reads the files only when its cache of tracks misses
 * (view-tracks-cache.ts), instead of every box of the project on every view.
 */
export type ListenerAccess = Omit<Listener, 'fileIds' | 'projectBoxes'>;

/**
 * Resolves the request into a Listener of the player, or throws the problem
 * the spec gives: 404 (no such player), 410 (expired), 401 `player-locked`
 * (collaborators only or a password, without a session that opens it), 401
 * `unauthorized` (a bearer token that is not valid).
 */
export async function resolveListener(ctx: Context, facts: ListenerFacts, playerId: string): Promise<Listener> {
  return withPlayerFiles(ctx, await resolveListenerAccess(ctx, facts, playerId));
}

/** resolveListener without the player's files (ListenerAccess): the same decision, the same problems. */
export async function resolveListenerAccess(ctx: Context, facts: ListenerFacts, playerId: string): Promise<ListenerAccess> {
  const player = await ctx.store.players.get(playerId);
  if (!player) throw notFound(`No player ${playerId} exists. Check that the link was copied whole.`);
  return listenerAccessOf(ctx, player, facts.caller, readSession(ctx, facts.sessionCookie, playerId, facts.now));
}

/**
 * What a listener operation knows of who asks: the API caller, when the
 * request carries a credential (authentication, http/auth.ts, checked it for
 * this very operation, by its row of the operation table, before the handler
 * ran, and refused a token that is not valid with 401, so a client learns its
 * token is wrong; there is no second check here: one bearer check serves
 * every caller); the player's session cookie as sent, not yet verified; and
 * the time it is verified at.
 */
export interface ListenerFacts {
  caller?: Caller;
  sessionCookie?: string;
  now: number;
}

/** The ListenerFacts of a request: its caller (if any), its player-session cookie, and now. */
export function listenerFacts(ctx: Pick<Context, 'clock'>, caller: Caller | undefined, facts: RequestFacts): ListenerFacts {
  const sessionCookie = facts.cookies[LISTENER_SESSION_COOKIE];
  return { ...(caller ? { caller } : {}), ...(sessionCookie ? { sessionCookie } : {}), now: ctx.clock.now() };
}

/**
 * The listener a bearer caller and a (verified) session make on a player
 * that exists: the part of resolveListener that needs no request, for the
 * session operation, which resolves the session it is about to set. Whether
 * they get in at all, and as whom, is the policy's answer (decideEntry);
 * refused, the problem of the lock it names.
 */
export async function listenerOf(ctx: Context, player: PlayerRecord, bearer: Caller | undefined, session: ListenerSession | undefined): Promise<Listener> {
  return withPlayerFiles(ctx, await listenerAccessOf(ctx, player, bearer, session));
}

/** listenerOf without the player's files (ListenerAccess). */
export async function listenerAccessOf(ctx: Context, player: PlayerRecord, bearer: Caller | undefined, session: ListenerSession | undefined): Promise<ListenerAccess> {
  const member = await memberOf(ctx, player, bearer, session);
  const passwordGiven = player.passwordHash !== null && session?.password === passwordTag(player.passwordHash);
  const purchase = member ? undefined : await purchaseFor(ctx, player, session);
  const facts = playerFacts(player);
  const entry = decideEntry({ ...facts, expired: hasExpired(player, ctx.clock.now()) }, { member: member?.principal, passwordGiven, paid: purchase !== undefined });
  if (!entry.allowed) throw entryRefused(player, entry.lock);
  const { principal } = entry;
  // A signed-in API user without a role on the project is a listener like anyone with the link, under their own name.
  const userId = member?.userId ?? bearer?.id;
  return {
    player,
    principal,
    permissions: playerPermissions(principal, facts),
    ...(userId ? { userId } : {}),
    ...(session ? { sessionId: session.id } : {}),
    ...(session?.formerIds ? { formerSessionIds: session.formerIds } : {}),
    ...(principal.kind === 'purchaser' && purchase?.purchaseId ? { purchaseId: purchase.purchaseId } : {}),
    ...displayNameOf(userId ? await ctx.store.users.get(userId) : undefined, session),
    canModerate: member !== undefined && canOnProject({ kind: 'user', role: member.principal.role }, 'project:write'),
  };
}

/** The listener with the files the player shows them (every box of its project, read now). */
async function withPlayerFiles(ctx: Context, access: ListenerAccess): Promise<Listener> {
  const boxes = await ctx.store.boxes.listProject(access.player.projectId);
  const fileIds = new Set(playerTrackGroups(access.player, boxes).flatMap((track) => track.versions.map((version) => version.id)));
  return { ...access, fileIds, projectBoxes: boxes };
}

/**
 * The member behind the request, if any: a bearer caller with a role on the
 * player's project, else the user of a collaborator's session while they
 * still have one (removing them ends the session at their next request).
 */
async function memberOf(
  ctx: Context,
  player: PlayerRecord,
  bearer: Caller | undefined,
  session: ListenerSession | undefined,
): Promise<{ principal: Extract<Principal, { kind: 'user' | 'collaborator' }>; userId: string } | undefined> {
  const bearerRole = bearer ? (await ctx.store.projects.getWithRole(player.projectId, bearer))?.role : undefined;
  if (bearer && bearerRole) return { principal: { kind: 'user', role: bearerRole }, userId: bearer.id };
  const collaborator = session?.userId ? await ctx.store.users.get(session.userId) : undefined;
  const collaboratorRole = collaborator ? (await ctx.store.projects.getWithRole(player.projectId, collaborator))?.role : undefined;
  if (collaborator && collaboratorRole) return { principal: { kind: 'collaborator', role: collaboratorRole }, userId: collaborator.id };
  return undefined;
}

/**
 * The interface on the players operations, payment `recipient`: "`everyone`: all users gain access
 * after one user pays; `customer`: only the paying user gains access".
 * The paying user is the player session: the one whose cookie holds the
 * purchase (set when the buyer came back from the payment page), or the
 * one that started the payment (the provider's notification recorded it,
 * the buyer has not come back yet).
 *
 * Undefined when the paywall is not paid for this session; else the
 * session's own purchase, when it has one.
 */
export async function purchaseFor(
  ctx: Pick<Context, 'store'>,
  player: PlayerRecord,
  session: Partial<Pick<ListenerSession, 'purchaseId' | 'id'>> | undefined,
): Promise<{ purchaseId?: string } | undefined> {
  if (!player.payment) return undefined;
  const own =
    session?.purchaseId !== undefined && (await ctx.store.purchases.exists(player.id, session.purchaseId))
      ? session.purchaseId
      : session?.id !== undefined
        ? (await ctx.store.purchases.bySession(player.id, session.id))?.id
        : undefined;
  if (own) return { purchaseId: own };
  if (player.payment.recipient === 'everyone' && (await ctx.store.purchases.any(player.id))) return {};
  return undefined;
}

export async function paidFor(ctx: Pick<Context, 'store'>, player: PlayerRecord, session: Partial<Pick<ListenerSession, 'purchaseId' | 'id'>> | undefined): Promise<boolean> {
  return (await purchaseFor(ctx, player, session)) !== undefined;
}

const signers = new WeakMap<Buffer, ListenerSessionSigner>();
/** One signer per signing secret (its key is derived once). */
export function listenerSessions(ctx: Pick<Context, 'config'>): ListenerSessionSigner {
  let signer = signers.get(ctx.config.signingSecret);
  if (!signer) {
    signer = new ListenerSessionSigner(ctx.config.signingSecret);
    signers.set(ctx.config.signingSecret, signer);
  }
  return signer;
}

/** The player's session from its cookie, when it is valid; a malformed, forged, expired or other player's cookie is no session. */
export function readSession(ctx: Pick<Context, 'config'>, value: string | undefined, playerId: string, now: number): ListenerSession | undefined {
  return value ? listenerSessions(ctx).verify(value, playerId, now) : undefined;
}

/** The user's own display name (never their email), else the name given to the session. */
function displayNameOf(user: Pick<UserRecord, 'name'> | undefined, session: ListenerSession | undefined): { displayName?: string } {
  const name = user?.name?.trim() ? user.name : session?.name;
  return name ? { displayName: name } : {};
}
