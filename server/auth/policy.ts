/**
 * The access policy: who may do what, in one place. Every check in the
 * server asks it, through `authorize` (authorize.ts): the API's services
 * (projects through `accessProject`; what an account owns; the server's
 * administration) and the player page. Nothing else decides access.
 *
 * Principals:
 * - a **user** of the API (bearer token), by role on the project: owner,
 *   admin, editor, viewer; or none;
 * - a **player link** holder, one of:
 *   - a public listener: anyone who opened the link, not signed in;
 *   - an invited collaborator's session on that player (a signed cookie), by
 *     the collaborator's role on the player's project;
 *   - a password session: a listener who gave the player's password (the
 *     password itself comes with the player issue);
 *   - a purchaser: a listener who paid the player's paywall, or, when the
 *     paywall's recipient is `everyone`, any listener once someone has paid
 *     (payments come with the paywall issue).
 *
 * Permissions are plain names; the two tables below say which principal
 * holds which, and on what condition of the resource. Sessions and link
 * holders get player permissions only, never project ones: a player cookie
 * is no key to the API.
 */
import type { Role, Schemas } from '../lib/api-types.ts';

export type ProjectPermission = 'project:read' | 'project:write' | 'project:sell' | 'project:delete';
export type PlayerPermission = 'player:view' | 'player:stream' | 'player:stream-lossless' | 'player:download' | 'player:comment';
export type Permission = ProjectPermission | PlayerPermission;

export type Principal =
  /** A caller of the API; `role` is their role on the project in question, undefined when they have none. */
  | { kind: 'user'; role: Role | undefined }
  /** Anyone holding a player link, not signed in. */
  | { kind: 'listener' }
  /** An invited collaborator's (or a project member's) session on one player, with their role on its project. */
  | { kind: 'collaborator'; role: Role }
  /** A listener who gave the player's password. */
  | { kind: 'password' }
  /** A listener for whom the player's paywall is paid. */
  | { kind: 'purchaser' };

/** What the policy needs to know of a player: the options and settings that grant or withhold access. */
export interface PlayerFacts {
  public: boolean;
  options: Pick<Schemas['PlayerOptions'], 'downloads' | 'comments'>;
  payment: Pick<Schemas['Payment'], 'fulfillment'> | null;
  /** Whether the player has a password (a field the player issue adds); absent means none. */
  hasPassword?: boolean;
}

type LinkKind = 'listener' | 'password' | 'purchaser';

// ---------------------------------------------------------------------------
// Projects: a user by role. The interface on authentication: "Player collaborator roles are
// `admin`, `editor`, `viewer`; what each role permits: … nothing further is
// specified". Our rule, written in the spec's Collaborator schema: "`admin`
// and `editor` may change the project and its players, `viewer` may only
// read"; the owner may do everything. No role at all is answered 404, as for
// a project that does not exist (see requireProjectAccess in access.ts).
// ---------------------------------------------------------------------------
const PROJECT_POLICY: Record<ProjectPermission, (role: Role) => boolean> = {
  'project:read': () => true,
  // The spec's Roles rule: "The owner of a project, and its collaborators with the admin or editor role, can change the
  // project, its boxes and its players. Collaborators with the viewer role can only read."
  'project:write': (role) => role === 'owner' || role === 'admin' || role === 'editor',
  // Set, change or remove a player's paywall. Every checkout pays the project owner's connected account, so what is
  // sold, and for how much, is the owner's to decide alone: an admin or editor may change the player, not sell it.
  'project:sell': (role) => role === 'owner',
  // Delete the project with everything in it: it is the owner's work and the owner's storage, so no invited role may.
  'project:delete': (role) => role === 'owner',
};

// ---------------------------------------------------------------------------
// Players: rows are permissions, columns are principals. A member is a user
// or a collaborator's session with any role on the player's project.
// ---------------------------------------------------------------------------

/**
 * The interface on the player object, `public`: "Whether the player link is public". A public
 * player opens to anyone with its link; one that is not ("Collaborators only",
 * 4.1) opens to its collaborators and no one else, not by password nor by
 * payment. A password is a second lock on a public link.
 */
const openByLink = (player: PlayerFacts) => player.public && !player.hasPassword;
const openByPassword = (player: PlayerFacts) => player.public && !!player.hasPassword;
/**
 * The interface on the players operations, `payment.fulfillment`: "What is enabled once a listener has
 * paid: downloads, or viewing access". So `allow-access` locks the whole
 * player and `allow-download` locks its downloads, until paid.
 */
const locks = (player: PlayerFacts, fulfillment: Schemas['Payment']['fulfillment']) => player.payment?.fulfillment === fulfillment;
/** A purchase counts on a public player with a paywall; it opens no collaborators-only player and means nothing without a paywall. */
const paidFor = (player: PlayerFacts) => player.public && player.payment !== null;
/** The interface on the player object options: `downloads` "Allow downloads"; `comments` "Allow commenting". Off means off for everyone on the player. */
const downloadsOn = (player: PlayerFacts) => player.options.downloads === true;
const commentsOn = (player: PlayerFacts) => player.options.comments === true;

type Rule = (player: PlayerFacts) => boolean;
const PLAYER_POLICY: Record<PlayerPermission, Record<'member' | LinkKind, Rule>> = {
  // See the player's tracks, names and artwork.
  'player:view': {
    // The interface on the players operations `collaborators`: "Invited collaborators", each with a role on the project; they see its players, paywall or not.
    member: () => true,
    listener: (p) => openByLink(p) && !locks(p, 'allow-access'),
    password: (p) => openByPassword(p) && !locks(p, 'allow-access'),
    // Paying opens what `allow-access` locked.
    purchaser: paidFor,
  },
  // Play the tracks inline: whoever may view may listen.
  'player:stream': {
    member: () => true,
    listener: (p) => openByLink(p) && !locks(p, 'allow-access'),
    password: (p) => openByPassword(p) && !locks(p, 'allow-access'),
    purchaser: paidFor,
  },
  // Play the lossless rendition. It decodes to the very samples of the uploaded master, so it is a download by another
  // name: `allow-download` ("What is enabled once a listener has paid: downloads") holds it back until paid, as it
  // holds back the files; until then a listener plays the compressed stream only. Without a paywall it follows
  // `player:stream`, downloads on or off (off, it stands in for the original, which is never streamed then).
  'player:stream-lossless': {
    member: () => true,
    listener: (p) => openByLink(p) && !p.payment,
    password: (p) => openByPassword(p) && !p.payment,
    purchaser: paidFor,
  },
  // Download the files: only when `downloads` is on, and for listeners only once an `allow-download` paywall is paid.
  'player:download': {
    member: downloadsOn,
    listener: (p) => openByLink(p) && downloadsOn(p) && !p.payment,
    password: (p) => openByPassword(p) && downloadsOn(p) && !p.payment,
    purchaser: (p) => paidFor(p) && downloadsOn(p),
  },
  // Comment: only when `comments` is on, for whoever may view.
  'player:comment': {
    member: commentsOn,
    listener: (p) => openByLink(p) && commentsOn(p) && !locks(p, 'allow-access'),
    password: (p) => openByPassword(p) && commentsOn(p) && !locks(p, 'allow-access'),
    purchaser: (p) => paidFor(p) && commentsOn(p),
  },
};

const PLAYER_PERMISSIONS = Object.keys(PLAYER_POLICY) as PlayerPermission[];

/** Whether the principal holds a project permission on the project its role was read for. */
export function canOnProject(principal: Principal, permission: ProjectPermission): boolean {
  // Only API users act on projects; link holders and sessions have no project permissions.
  if (principal.kind !== 'user' || principal.role === undefined) return false;
  return PROJECT_POLICY[permission](principal.role);
}

/** Each project permission by the name its ability has in a Project answer (`project:write` is `write`). */
const ABILITY_OF = {
  'project:read': 'read',
  'project:write': 'write',
  'project:sell': 'sell',
  'project:delete': 'delete',
} as const satisfies Record<ProjectPermission, keyof Schemas['ProjectAbilities']>;

/**
 * What a user of this role may do with a project, as the `abilities` of a Project answer: each of PROJECT_POLICY's
 * permissions, asked of the same `canOnProject` every service asks, so a client that shows a control by them is
 * shown what the server will then allow, and no second copy of the rules exists to disagree (Outline's
 * `abilities: serialize(user, model)`). No role holds nothing.
 */
export function projectAbilities(role: Role | undefined): Schemas['ProjectAbilities'] {
  const principal: Principal = { kind: 'user', role };
  const abilities = {} as Schemas['ProjectAbilities'];
  for (const permission of Object.keys(PROJECT_POLICY) as ProjectPermission[]) abilities[ABILITY_OF[permission]] = canOnProject(principal, permission);
  return abilities;
}

/**
 * What a user of this role on a player's project may do with the player, as the `abilities` of a Player answer. A
 * player is part of its project, so these are the project's permissions again (the spec's Roles rule: "The owner of
 * a project, and its collaborators with the admin or editor role, can change the project, its boxes and its
 * players. Collaborators with the viewer role can only read."): changing it, its collaborators included, is
 * `project:write` (players-service and collaborators-service load it for `write`); its paywall is `project:sell`;
 * moderating anyone's comments on its files is `project:write` too (comments-service's `canModerate`).
 */
export function playerAbilities(role: Role | undefined): Schemas['PlayerAbilities'] {
  const project = projectAbilities(role);
  return { write: project.write, sell: project.sell, moderate: project.write };
}

// ---------------------------------------------------------------------------
// What an account owns, and the server's administration. An actor is an
// account acting through one credential: the person (the session, a personal
// token) or an app (an OAuth access token, with its app's id).
// ---------------------------------------------------------------------------

/** An account acting through one credential. */
export interface Actor {
  userId: string;
  /** The scopes its credential holds; the session and tokens without scopes hold every one. */
  scopes: readonly string[] | 'all';
  /** Set when the credential is an OAuth app's access token: the app acting for the account. */
  appId?: string;
}

/** Something an account owns, by kind; `appId` is the app that made it, for what apps make (webhooks). */
export interface OwnedThing {
  kind: 'webhook' | 'app' | 'passkey' | 'token' | 'session' | 'upload' | 'ceremony';
  id: string;
  ownerId: string;
  appId?: string | null;
}

/**
 * `account:own`: a thing is its account's, and nobody acting for another account may see it. Of what apps make (a
 * webhook), an app sees only its own (issue 28: "Webhooks record the app that made them; an app sees only its
 * own"); the person, by the session or a personal token, sees all of the account's, those its apps made included.
 */
export function ownsThing(actor: Actor, thing: OwnedThing): boolean {
  if (thing.ownerId !== actor.userId) return false;
  if (thing.kind === 'webhook' && actor.appId !== undefined) return thing.appId === actor.appId;
  return true;
}

/** `server:administer`: an administrator's account that is not disabled (a disabled administrator administers nothing). */
export function mayAdminister(account: { admin: boolean; disabled: boolean } | undefined): boolean {
  return !!account?.admin && !account.disabled;
}

const ROLE_RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

/**
 * Whether someone of role `granter` on a project may grant `role` on it (to a collaborator they invite): no one hands out
 * more than they hold, since an editor who could invite admins could make themselves one through a second address.
 */
export function canGrantRole(granter: Role, role: Role): boolean {
  return ROLE_RANK[role] <= ROLE_RANK[granter];
}

/** Whether the principal holds a player permission on this player. */
export function canOnPlayer(principal: Principal, permission: PlayerPermission, player: PlayerFacts): boolean {
  const rules = PLAYER_POLICY[permission];
  switch (principal.kind) {
    case 'user':
      return principal.role !== undefined && rules.member(player);
    case 'collaborator':
      return rules.member(player);
    default:
      return rules[principal.kind](player);
  }
}

// ---------------------------------------------------------------------------
// Entry: whether a player opens to someone at all, and if not, which lock
// stops them. The listener operations throw the problem of the lock the
// policy names; they decide nothing themselves.
// ---------------------------------------------------------------------------

/** What stops someone at a player's door: its link expired, it is for collaborators only, or it has a password. */
export type EntryLock = 'expired' | 'collaborators' | 'password';

/** Who is at the door: a member's principal (by token or collaborator session), else what their session proves. */
export interface Visitor {
  member?: Extract<Principal, { kind: 'user' | 'collaborator' }>;
  /** The session gave the player's current password. */
  passwordGiven: boolean;
  /** The player's paywall is paid for this session (its own purchase, or anyone's on an `everyone` paywall). */
  paid: boolean;
}

export type EntryDecision = { allowed: true; principal: Principal } | { allowed: false; lock: EntryLock };

/**
 * The door of a player. Past `expires` it opens for no one. A member gets
 * in by membership. Anyone else holds the link: a collaborators-only player
 * opens to no one else (not by password, not by payment); one with a
 * password only to a session that gave it (a purchase does not stand in for
 * the password); then they are a purchaser when it is paid for them, else a
 * password session, else a listener. What each may do inside is the player
 * table above.
 */
export function decideEntry(player: PlayerFacts & { expired: boolean }, visitor: Visitor): EntryDecision {
  if (player.expired) return { allowed: false, lock: 'expired' };
  if (visitor.member) return { allowed: true, principal: visitor.member };
  if (!player.public) return { allowed: false, lock: 'collaborators' };
  if (player.hasPassword && !visitor.passwordGiven) return { allowed: false, lock: 'password' };
  if (visitor.paid && paidFor(player)) return { allowed: true, principal: { kind: 'purchaser' } };
  return { allowed: true, principal: visitor.passwordGiven && player.hasPassword ? { kind: 'password' } : { kind: 'listener' } };
}

/**
 * What a player's paywall holds back from this principal, the reason the
 * view shows it locked: `everything` (`allow-access`, not paid), `downloads`
 * (`allow-download` on a player with downloads on, not paid), or nothing.
 * Members and purchasers are held back from nothing.
 */
export function paywallHolds(principal: Principal, player: PlayerFacts): 'everything' | 'downloads' | undefined {
  if (!player.payment || principal.kind === 'user' || principal.kind === 'collaborator' || principal.kind === 'purchaser') return undefined;
  if (locks(player, 'allow-access')) return 'everything';
  return downloadsOn(player) ? 'downloads' : undefined;
}

/** Every player permission the principal holds on this player. */
export function playerPermissions(principal: Principal, player: PlayerFacts): Set<PlayerPermission> {
  return new Set(PLAYER_PERMISSIONS.filter((permission) => canOnPlayer(principal, permission, player)));
}
