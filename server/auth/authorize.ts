/**
 * The one question every access decision is asked as: may this actor do
 * this to that? `authorize(actor, permission, subject)` answers from the
 * policy (policy.ts) and, when the answer is no, throws the refusal of one
 * table of messages (REFUSALS), so that no service words its own and no two
 * disagree. Modelled on Outline's `authorize(user, action, model)` and
 * immich's `requireAccess`.
 *
 * What it decides:
 * - `project:*` on a project, by the actor's role on it (404 with no role,
 *   as for a project that does not exist; 403 when the role cannot);
 * - `account:own` on something an account owns (a webhook, an app, a
 *   passkey, a token, a session, an upload under way, a ceremony): 404 when
 *   it is not the actor's, as for one that does not exist, so that nobody
 *   learns what another account has; a webhook an app made is its app's;
 * - `server:administer`: 403 unless the actor's account is an administrator
 *   and not disabled;
 * - `scope:<scope>` on the actor's credential, for an operation that needs a
 *   second scope beside the one its row names (a player made without a
 *   project makes a project too, so needs `projects:write`).
 *
 * The scope an operation names is checked once, by authentication, against
 * its row of the operation table; this is everything after that.
 */
import { HttpProblem } from '../lib/problems.ts';
import type { Role } from '../lib/api-types.ts';
import { canOnProject, mayAdminister, ownsThing, type Actor, type OwnedThing, type ProjectPermission } from './policy.ts';
import { scopeCovers } from './scopes.ts';

export type { Actor, OwnedThing };

/** What a permission is asked of. */
export type Subject =
  | { permission: ProjectPermission; project: { id: string; role: Role | undefined } }
  | { permission: 'account:own'; thing: OwnedThing }
  | { permission: 'server:administer'; account: { admin: boolean; disabled: boolean } | undefined }
  | { permission: 'scope'; scope: string; why: string };

/**
 * The refusals, by permission: what each says, and with which status. Each message says what to do instead
 * (RFC 9457 §3.1.4, "detail": "a human-readable explanation specific to this occurrence of the problem").
 */
const REFUSALS = {
  hiddenProject: (id: string) => new HttpProblem('not-found', `No project ${id} exists that you can see.`),
  'project:read': (id: string, role: Role) => new HttpProblem('forbidden', `Your role on project ${id} is ${role}, which cannot read it.`),
  'project:write': (id: string, role: Role) =>
    new HttpProblem('forbidden', `Your role on project ${id} is ${role}, which can only read. Ask the project's owner for the editor or admin role.`),
  'project:sell': (id: string, role: Role) =>
    new HttpProblem(
      'forbidden',
      `Only the owner of project ${id} may set, change or remove a player's payment: its checkouts pay the owner's connected account. ` +
        `Your role is ${role}; leave payment out, or ask the project's owner to set it.`,
    ),
  'project:delete': (id: string, role: Role) => new HttpProblem('forbidden', `Only the owner of project ${id} may delete it. Your role is ${role}; ask the project's owner to delete it.`),
  'account:own': (thing: OwnedThing) => new HttpProblem('not-found', OWNED_MISSING[thing.kind](thing.id, thing)),
  'server:administer': () => new HttpProblem('forbidden', 'Only administrators of this server may list, change or invite accounts. Ask an administrator.'),
  scope: (scope: string, why: string, isApp: boolean) =>
    new HttpProblem(
      'insufficient-scope',
      `${why} needs the scope ${scope} too, which this token lacks. ${isApp ? `Send the person through authorization again with scope=${scope} added.` : `Create a token with ${scope} in Settings.`}`,
      {
        // RFC 6750 §3.1: "The resource server SHOULD respond with the HTTP 403 (Forbidden) status code and MAY include the "scope" attribute".
        headers: { 'WWW-Authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
        members: { scope },
      },
    ),
} as const;

/** What a 404 says of each kind of owned thing: as for one that does not exist. */
const OWNED_MISSING: Record<OwnedThing['kind'], (id: string, thing: OwnedThing) => string> = {
  webhook: (id, thing) => `No webhook ${id} exists that you can see${thing.appId === undefined ? '' : ': an app sees only the webhooks it made'}. GET /webhooks lists them.`,
  app: (id) => `You have no app ${id}.`,
  passkey: (id) => `You have no passkey ${id}.`,
  token: (id) => `You have no token ${id}.`,
  session: (id) => `You have no session ${id}.`,
  upload: (id) => `No upload ${id} of yours exists here. Start a new one.`,
  ceremony: () => 'This passkey ceremony has expired or was already used. Start again.',
};

/** Whether the actor may; `authorize` is the same question, throwing the refusal. */
export function can(actor: Actor, subject: Subject): boolean {
  switch (subject.permission) {
    case 'account:own':
      return ownsThing(actor, subject.thing);
    case 'server:administer':
      return mayAdminister(subject.account);
    case 'scope':
      return actor.scopes === 'all' || scopeCovers(actor.scopes, subject.scope);
    default:
      return canOnProject({ kind: 'user', role: subject.project.role }, subject.permission);
  }
}

/** Throws the refusal of REFUSALS unless the policy lets the actor. */
export function authorize(actor: Actor, subject: Subject): void {
  if (can(actor, subject)) return;
  switch (subject.permission) {
    case 'account:own':
      throw REFUSALS['account:own']({ ...subject.thing, ...(actor.appId !== undefined ? { appId: actor.appId } : {}) });
    case 'server:administer':
      throw REFUSALS['server:administer']();
    case 'scope':
      throw REFUSALS.scope(subject.scope, subject.why, actor.appId !== undefined);
    default: {
      const { id, role } = subject.project;
      // The spec's Visibility rule: "A resource the caller may not see answers 404, exactly as one that does not exist,
      // so existence does not leak. A resource the caller may see but not change answers 403."
      if (role === undefined || !canOnProject({ kind: 'user', role }, 'project:read')) throw REFUSALS.hiddenProject(id);
      throw REFUSALS[subject.permission](id, role);
    }
  }
}

/** The actor of an API request: its account, and the credential it came with (req.user and req.auth, http/auth.ts). */
export function actorOf(user: { id: string }, auth: { scopes: readonly string[] | 'all'; appId?: string } | undefined): Actor {
  return { userId: user.id, scopes: auth?.scopes ?? 'all', ...(auth?.appId !== undefined ? { appId: auth.appId } : {}) };
}
