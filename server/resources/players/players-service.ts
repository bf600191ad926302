/** Players (the interface on the player object and the players operations): shareable windows onto a project. */
import type { Context } from '../../context.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import type { Role, Schemas } from '../../lib/api-types.ts';
import type { SortKey } from '../../lib/sort-keys.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, accessProjectOwnedBy, requireGrantable, type Caller } from '../../auth/access.ts';
import { playerAbilities } from '../../auth/policy.ts';
import { badRequest, conflict, HttpProblem, notFound } from '../../lib/problems.ts';
import { normalizeEmail, type UserRecord } from '../account/user-repository.ts';
import { DEFAULT_PROJECT_COLOR, projectJson } from '../projects/projects-service.ts';
import type { PlayerRecord } from './player-repository.ts';
import type { Store } from '../../repositories.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';
import { hashPassword } from './player-password.ts';
import { releasePortal } from '../portal/portal-service.ts';
import { mailCollaboratorInvitations, reserveInvitationMails } from './invitation-mail.ts';
import { actorOf, authorize, type Actor } from '../../auth/authorize.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'signer' | 'jobQueued' | 'secrets'>;

type Options = Schemas['PlayerOptions'];

/**
 * The interface on the players operations, "Final default if no preference". quality, targetLufs and
 * loudnessPlatform have none ("undefined") and stay absent.
 */
export const FINAL_OPTION_DEFAULTS: Omit<Options, 'quality' | 'targetLufs' | 'loudnessPlatform'> = {
  metadata: false,
  isrc: false,
  downloads: true,
  comments: true,
  loudnessMatch: false,
  studio: false,
  stacks: false,
  serviceCTA: true,
  boxSubtitle: 'artist',
};

const OPTION_NAMES: Array<keyof Options> = [
  'quality', 'metadata', 'isrc', 'downloads', 'comments', 'loudnessMatch', 'targetLufs', 'loudnessPlatform', 'studio', 'stacks', 'serviceCTA', 'boxSubtitle',
];

/**
 * The interface on the players operations: "When a value is omitted, it falls back to the creator's
 * default player preference; if none is found, the final default applies."
 */
export function resolveOptions(requested: Schemas['PlayerOptionsInput'] = {}, preferred: Schemas['PlayerOptionsInput'] = {}): Options {
  const resolved: Record<string, unknown> = {};
  for (const name of OPTION_NAMES) {
    const value = requested[name] ?? preferred[name] ?? (FINAL_OPTION_DEFAULTS as Record<string, unknown>)[name];
    if (value !== undefined) resolved[name] = value;
  }
  return resolved as Options;
}

export const playerUrl = (ctx: Ports, playerId: string) => `${ctx.config.publicUrl}/p/${playerId}`;

/**
 * The player as a caller of `role` on its project sees it: its `abilities` are what that role may do with it. Built
 * member by member, in the answer's order, rather than from spreads of one-member objects: every player read makes
 * one (issue 32).
 */
export function playerJson(ctx: Ports, player: PlayerRecord, role: Role): Schemas['Player'] {
  const json = { name: player.name, id: player.id, projectid: player.projectId } as Schemas['Player'];
  if (player.folderId) json.folderid = player.folderId;
  if (player.boxIds) json.boxids = player.boxIds;
  json.playerUrl = playerUrl(ctx, player.id);
  json.color = player.color;
  json.object = 'player';
  json.public = player.public;
  // The password itself never leaves the server, not even hashed.
  json.hasPassword = player.passwordHash !== null;
  if (player.expires !== null) json.expires = player.expires;
  json.abilities = playerAbilities(role);
  json.timeCreated = player.timeCreated;
  json.timeModified = player.timeModified;
  json.options = player.options;
  if (player.upload) json.upload = player.upload;
  if (player.payment) json.payment = player.payment;
  if (player.collaborators.length > 0) json.collaborators = player.collaborators;
  return json;
}

/**
 * Only the project's owner may set a paywall (the policy's `project:sell`), so
 * the caller here is the owner, whose connected account every checkout pays.
 */
async function requirePaymentProvider(payments: Context['payments'], store: Store, caller: Caller) {
  // A paywall on a server that takes no payments could never be bought: it would only lock listeners out.
  if (!payments) {
    throw new HttpProblem('payment-provider-required',
      "A paywall needs payments, and this server takes none: its operator must set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (see the README's configuration). Then connect your account with POST /me/payment-provider.",
    );
  }
  const user = await store.users.get(caller.id);
  if (!user?.paymentProvider) {
    // The interface on the players operations: payment "requires that the payment-provider integration of the caller is set up first".
    throw new HttpProblem('payment-provider-required', 'A paywall needs a connected payment provider. Connect one with POST /me/payment-provider, then set payment again.');
  }
}

/**
 * The upload portal sends its uploader to `redirect` when they are done, so
 * it must be a web page: an absolute http or https URL. A `javascript:` or
 * `data:` URI is a valid URI (RFC 3986) that a browser would run as script
 * on the portal's own origin, so anything but http and https is refused.
 */
function checkRedirect(redirect: string): void {
  let url: URL | undefined;
  try {
    url = new URL(redirect);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw badRequest(`upload.redirect takes only an absolute http or https URL, such as https://www.example.com/thanks; ${JSON.stringify(redirect.slice(0, 100))} is not one.`, [
      { pointer: '#/upload/redirect', detail: 'is not an http or https URL' },
    ]);
  }
}

export async function createPlayer(ctx: Ports & Pick<Context, 'payments'>, caller: Caller, body: Schemas['CreatePlayerRequest'], actor: Actor = actorOf(caller, undefined)): Promise<Versioned<Schemas['Player']>> {
  // The spec (the oauth2 scheme): "Creating a player without projectid makes a project too, and needs projects:write
  // beside players:write": players:write alone is no way to make projects.
  if (body.projectid === undefined) authorize(actor, { permission: 'scope', scope: 'projects:write', why: 'A player without projectid makes a project, which' });
  // The interface on the players operations: folderid and boxids each need projectid, and exclude each other.
  if (body.folderid !== undefined && body.projectid === undefined) {
    throw badRequest('folderid needs projectid: give the project the folder belongs to.', [{ pointer: '#/projectid', detail: 'is required when folderid is given' }]);
  }
  if (body.boxids !== undefined && body.projectid === undefined) {
    throw badRequest('boxids needs projectid: give the project the boxes belong to.', [{ pointer: '#/projectid', detail: 'is required when boxids is given' }]);
  }
  if (body.boxids !== undefined && body.folderid !== undefined) {
    throw badRequest('Give folderid or boxids, not both: a player is scoped to one folder or to a list of boxes.', [{ pointer: '#/folderid', detail: 'must not be given with boxids' }]);
  }
  if (body.upload?.redirect !== undefined) checkRedirect(body.upload.redirect);
  // Whose the project is comes first: an editor's paywall is refused (403) whether or not they connected a provider.
  if (body.payment && body.projectid !== undefined) await accessProject(ctx, caller, body.projectid, 'sell');
  if (body.payment) await requirePaymentProvider(ctx.payments, ctx.store, caller);
  const user = (await ctx.store.users.get(caller.id))!;
  const now = ctx.clock.now();
  // Hashed before the transaction: scrypt takes tens of milliseconds, and no row should wait on it.
  const passwordHash = typeof body.password === 'string' ? await hashPassword(body.password) : null;
  // Each collaborator is mailed their invite link: the mails are reserved before the transaction (their caps:
  // invitation-mail.ts), and given back if the player is not made.
  const mails = await reserveInvitationMails(ctx, caller.id, (body.collaborators ?? []).map(({ email }) => normalizeEmail(email)));
  try {
    return await insertPlayer(ctx, caller, body, user, now, passwordHash);
  } catch (error) {
    await mails.release();
    throw error;
  }
}

async function insertPlayer(
  ctx: Ports & Pick<Context, 'payments'>,
  caller: Caller,
  body: Schemas['CreatePlayerRequest'],
  user: UserRecord,
  now: number,
  passwordHash: string | null,
): Promise<Versioned<Schemas['Player']>> {
  return ctx.store.transaction(async (store) => {
    let projectId = body.projectid;
    let color = DEFAULT_PROJECT_COLOR;
    // The account whose project it is: not always the caller (an editor of another's project). The player is theirs,
    // their webhooks hear of it, and it is listed as theirs (interface: "List owned players returns only the players
    // the caller owns").
    let ownerId = caller.id;
    // The caller's role on the project: theirs when they make it here.
    let role: Role = 'owner';
    if (projectId !== undefined) {
      // A paywall only from the project's owner (checked again here, in the transaction that writes the player).
      const access = await accessProject({ ...ctx, store }, caller, projectId, body.payment ? 'sell' : 'write');
      const project = access.project;
      role = access.role;
      for (const collaborator of body.collaborators ?? []) requireGrantable(role, collaborator.role);
      color = project.color;
      ownerId = project.ownerId;
      if (body.folderid !== undefined) {
        const folder = await store.boxes.get(projectId, body.folderid);
        if (folder?.kind !== 'folder') throw conflict(`folderid ${body.folderid} is not a folder of project ${projectId}.`);
      }
      for (const id of body.boxids ?? []) {
        if (!(await store.boxes.get(projectId, id))) throw conflict(`boxids: ${id} is not a box of project ${projectId}.`);
      }
    } else {
      // "Creates the player for an existing project without creating a new project": without it, a new project is made.
      projectId = newId('prj');
      await store.projects.insert({ id: projectId, ownerId: caller.id, name: body.name, color, sortBy: body.sortBy ?? null, artworkId: null, timeCreated: now, timeModified: now });
      const data = await projectJson({ ...ctx, store }, (await store.projects.get(projectId))!, 'owner');
      await recordEvent(ctx, store, { type: 'project.created', ownerId, projectId, data });
    }
    const collaborators = new Map<string, Schemas['Collaborator']>();
    for (const { email, role } of body.collaborators ?? []) collaborators.set(normalizeEmail(email), { email: normalizeEmail(email), role });
    const player: PlayerRecord = {
      id: newId('ply'),
      projectId,
      ownerId,
      createdBy: caller.id,
      name: body.name,
      color,
      // The interface on the players operations: public defaults to "the creator's in-app player preference …; if the creator has none, true".
      public: body.public ?? user.preferences.public ?? true,
      folderId: body.folderid ?? null,
      boxIds: body.boxids ?? null,
      options: resolveOptions(body.options, user.preferences.options),
      upload: body.upload ?? null,
      payment: body.payment ?? null,
      collaborators: [...collaborators.values()],
      passwordHash,
      expires: body.expires ?? null,
      version: 1,
      timeCreated: now,
      timeModified: now,
    };
    await store.players.insert(player);
    // Each collaborator is mailed their invite link, if this server sends mail; with the player, or not at all.
    await mailCollaboratorInvitations(ctx, store, player, user, player.collaborators.map((collaborator) => collaborator.email));
    // The event goes to the owner's webhooks, so it shows the player as its owner sees it; the answer, as the caller does.
    await recordEvent(ctx, store, { type: 'player.created', ownerId, projectId, data: playerJson(ctx, player, 'owner') });
    return { body: playerJson(ctx, player, role), version: player.version };
  });
}

/**
 * Writes player.updated, in the transaction `store` of the change, for the
 * webhooks of the account that owns the player's project.
 */
export async function recordPlayerUpdated(ctx: Ports, store: Store, player: PlayerRecord): Promise<void> {
  const project = await store.projects.get(player.projectId);
  await recordEvent(ctx, store, { type: 'player.updated', ownerId: project?.ownerId ?? player.ownerId, projectId: player.projectId, data: playerJson(ctx, player, 'owner') });
}

/**
 * The player, when the caller may `read`, `write` or `sell` (change its paywall) on its project; 404 for a player
 * they cannot see (as for none), 403 for a need their role does not meet.
 */
export async function loadPlayer(ctx: Ports, caller: Caller, playerId: string, need: 'read' | 'write' | 'sell'): Promise<PlayerRecord> {
  return (await loadPlayerAs(ctx, caller, playerId, need)).player;
}

/** loadPlayer, with the caller's role on the player's project: what the answer's `abilities` are made from. */
async function loadPlayerAs(ctx: Ports, caller: Caller, playerId: string, need: 'read' | 'write' | 'sell'): Promise<{ player: PlayerRecord; role: Role }> {
  const found = await ctx.store.players.getWithProjectOwner(playerId);
  if (!found) throw notFound(`No player ${playerId} exists that you can see.`);
  const { player, projectOwnerId } = found;
  try {
    const { role } = await accessProjectOwnedBy(ctx, caller, player.projectId, projectOwnerId, need);
    return { player, role };
  } catch (error) {
    if (error instanceof HttpProblem && error.status === 404) throw notFound(`No player ${playerId} exists that you can see.`);
    throw error;
  }
}

export async function getPlayer(ctx: Ports, caller: Caller, playerId: string): Promise<Versioned<Schemas['Player']>> {
  const { player, role } = await loadPlayerAs(ctx, caller, playerId, 'read');
  return { body: playerJson(ctx, player, role), version: player.version };
}

/**
 * Interface: "List owned players returns only the players the caller owns". A
 * player belongs to the owner of its project, so this is every player of the
 * caller's projects, whoever created it, and none of anyone else's projects.
 */
export async function listPlayers(ctx: Ports, caller: Caller) {
  // Players of the caller's own projects only, so they are the owner.
  return (await ctx.store.players.listOwnedBy(caller.id)).map((player) => playerJson(ctx, player, 'owner'));
}

/** The types of the parts of the players' sort key (lib/sort-keys.ts newestFirst), which their cursors hold: minus the creation time, the id. */
export const LIST_ORDER_KEY_SHAPE: Array<'number' | 'string'> = ['number', 'string'];

/** At most `count` of listPlayers, in its order, after the player of sort key `after` (newestFirst's), read by keyset. */
export async function listPlayersPage(ctx: Ports, caller: Caller, after: SortKey | undefined, count: number) {
  const from = after && { timeCreated: -(after[0] as number), id: after[1] as string };
  return (await ctx.store.players.listOwnedByPage(caller.id, from, count)).map((player) => playerJson(ctx, player, 'owner'));
}

/**
 * Changes only the fields given; there are no fallbacks on update. The
 * options are merged into the stored ones, so the player is read and
 * written in one transaction with its row locked: a concurrent update of
 * another field (or another option) waits, then merges into what this one
 * wrote, and both land.
 */
export async function updatePlayer(
  ctx: Ports & Pick<Context, 'payments'>,
  caller: Caller,
  playerId: string,
  body: Schemas['UpdatePlayerRequest'],
  ifMatch?: IfMatch,
): Promise<Versioned<Schemas['Player']>> {
  // Setting, changing or removing (`null`) the paywall is the project owner's alone: its checkouts pay them.
  const sells = body.payment !== undefined;
  const { role } = await loadPlayerAs(ctx, caller, playerId, sells ? 'sell' : 'write');
  if (body.upload?.redirect !== undefined) checkRedirect(body.upload.redirect);
  const now = ctx.clock.now();
  // `password: null` removes it; absent leaves it. Hashed before the transaction, as on create.
  const passwordHash = typeof body.password === 'string' ? await hashPassword(body.password) : body.password;
  const updated = await ctx.store.transaction(async (store) => {
    const player = await store.players.getForUpdate(playerId);
    if (!player) throw notFound(`No player ${playerId} exists that you can see.`);
    // The precondition first, then the rules of the change (RFC 9110 §13.2.2).
    requireIfMatch(ifMatch, player.version, `Player ${playerId}`, `GET /players/${playerId}`);
    if (body.payment) await requirePaymentProvider(ctx.payments, store, caller);
    const next: PlayerRecord = {
      ...player,
      name: body.name ?? player.name,
      public: body.public ?? player.public,
      options: { ...player.options, ...body.options },
      // Merged like the options; the portal reads it on every request, so `enabled: false` closes it at once.
      upload: body.upload ? { ...player.upload, ...body.upload } : player.upload,
      // `null` removes the paywall; absent leaves it.
      payment: body.payment === undefined ? player.payment : body.payment,
      passwordHash: passwordHash === undefined ? player.passwordHash : passwordHash,
      expires: body.expires === undefined ? player.expires : body.expires,
      timeModified: now,
    };
    next.version = await store.players.update(playerId, next, now);
    await recordPlayerUpdated(ctx, store, next);
    return next;
  });
  // Closing the portal gives up its unfinished uploads, and the room they took.
  if (body.upload?.enabled === false) await releasePortal(ctx, playerId);
  return { body: playerJson(ctx, updated, role), version: updated.version };
}

/**
 * Deletes the player: its link stops opening, and its collaborators (with
 * the roles and invite links they had through it) and purchases go with it.
 * Sessions on it are signed cookies for a player that no longer exists, so
 * they open nothing. The project and its files stay.
 */
export async function deletePlayer(ctx: Ports, caller: Caller, playerId: string, ifMatch?: IfMatch): Promise<Record<string, never>> {
  await loadPlayer(ctx, caller, playerId, 'write');
  await ctx.store.transaction(async (store) => {
    const player = await store.players.getForUpdate(playerId);
    if (!player) throw notFound(`No player ${playerId} exists that you can see.`);
    // RFC 9110 §13.1.1: with If-Match failing, "the server MUST NOT perform the requested method".
    requireIfMatch(ifMatch, player.version, `Player ${playerId}`, `GET /players/${playerId}`);
    if (!(await store.players.delete(playerId))) throw notFound(`No player ${playerId} exists that you can see.`);
  });
  return {};
}
