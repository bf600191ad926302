import { describe, expect, it } from 'vitest';
import { canOnPlayer, canOnProject, decideEntry, paywallHolds, playerPermissions, type PlayerFacts, type PlayerPermission, type Principal, type Visitor } from './policy.ts';
import type { Role } from '../lib/api-types.ts';

const player = (facts: Partial<PlayerFacts> & { downloads?: boolean; comments?: boolean } = {}): PlayerFacts => ({
  public: facts.public ?? true,
  options: { downloads: facts.downloads ?? true, comments: facts.comments ?? true },
  payment: facts.payment ?? null,
  hasPassword: facts.hasPassword,
});
const granted = (principal: Principal, facts: PlayerFacts) => [...playerPermissions(principal, facts)].sort();
const ALL: PlayerPermission[] = ['player:comment', 'player:download', 'player:stream', 'player:stream-lossless', 'player:view'];

const listener: Principal = { kind: 'listener' };
const password: Principal = { kind: 'password' };
const purchaser: Principal = { kind: 'purchaser' };
const collaborator = (role: Role): Principal => ({ kind: 'collaborator', role });

describe('access policy: projects', () => {
  it('lets every role read and only owner, admin and editor write', () => {
    const roles: Role[] = ['owner', 'admin', 'editor', 'viewer'];
    expect(roles.map((role) => canOnProject({ kind: 'user', role }, 'project:read'))).toEqual([true, true, true, true]);
    expect(roles.map((role) => canOnProject({ kind: 'user', role }, 'project:write'))).toEqual([true, true, true, false]);
  });

  it("lets only the owner sell: set, change or remove a player's paywall, whose checkouts pay the owner", () => {
    const roles: Role[] = ['owner', 'admin', 'editor', 'viewer'];
    expect(roles.map((role) => canOnProject({ kind: 'user', role }, 'project:sell'))).toEqual([true, false, false, false]);
    expect(canOnProject({ kind: 'user', role: undefined }, 'project:sell')).toBe(false);
    expect(canOnProject(collaborator('owner'), 'project:sell')).toBe(false);
  });

  it('gives a user without a role nothing, and link holders and sessions no project permission at all', () => {
    expect(canOnProject({ kind: 'user', role: undefined }, 'project:read')).toBe(false);
    for (const principal of [listener, password, purchaser, collaborator('owner'), collaborator('admin')]) {
      expect(canOnProject(principal, 'project:read'), principal.kind).toBe(false);
      expect(canOnProject(principal, 'project:write'), principal.kind).toBe(false);
    }
  });
});

describe('access policy: players', () => {
  it('opens a public player to a listener, with downloads and comments as the options say', () => {
    expect(granted(listener, player())).toEqual(ALL);
    expect(granted(listener, player({ downloads: false }))).toEqual(['player:comment', 'player:stream', 'player:stream-lossless', 'player:view']);
    expect(granted(listener, player({ comments: false }))).toEqual(['player:download', 'player:stream', 'player:stream-lossless', 'player:view']);
    expect(granted(listener, player({ downloads: false, comments: false }))).toEqual(['player:stream', 'player:stream-lossless', 'player:view']);
  });

  it('opens a collaborators-only player to its collaborators of every role and to no listener, password or purchaser', () => {
    const privatePlayer = player({ public: false, payment: { fulfillment: 'allow-access' }, hasPassword: true });
    for (const principal of [listener, password, purchaser]) expect(granted(principal, privatePlayer), principal.kind).toEqual([]);
    for (const role of ['owner', 'admin', 'editor', 'viewer'] as Role[]) expect(granted(collaborator(role), privatePlayer), role).toEqual(ALL);
    expect(granted({ kind: 'user', role: 'viewer' }, privatePlayer)).toEqual(ALL);
    expect(granted({ kind: 'user', role: undefined }, privatePlayer)).toEqual([]);
  });

  it('holds collaborators to the downloads and comments options too', () => {
    expect(granted(collaborator('editor'), player({ public: false, downloads: false, comments: false }))).toEqual(['player:stream', 'player:stream-lossless', 'player:view']);
  });

  it('locks an allow-access paywall for listeners until paid, and never for collaborators', () => {
    const paywalled = player({ payment: { fulfillment: 'allow-access' } });
    expect(granted(listener, paywalled)).toEqual([]);
    expect(granted(purchaser, paywalled)).toEqual(ALL);
    expect(granted(collaborator('viewer'), paywalled)).toEqual(ALL);
  });

  it('locks only the downloads, and lossless playing, of an allow-download paywall until paid', () => {
    const paywalled = player({ payment: { fulfillment: 'allow-download' } });
    // Lossless decodes to the master's samples: held back with the downloads, only the compressed stream plays.
    expect(granted(listener, paywalled)).toEqual(['player:comment', 'player:stream', 'player:view']);
    expect(granted(purchaser, paywalled)).toEqual(ALL);
    expect(granted(collaborator('viewer'), paywalled)).toEqual(ALL);
    // Paying does not switch on downloads the player has off; it does open lossless playing.
    expect(canOnPlayer(purchaser, 'player:stream-lossless', player({ downloads: false, payment: { fulfillment: 'allow-download' } }))).toBe(true);
    expect(canOnPlayer(listener, 'player:stream-lossless', player({ downloads: false, payment: { fulfillment: 'allow-download' } }))).toBe(false);
    expect(canOnPlayer(purchaser, 'player:download', player({ downloads: false, payment: { fulfillment: 'allow-download' } }))).toBe(false);
  });

  it('asks a password of listeners when the player has one, as a second lock on a public link', () => {
    const guarded = player({ hasPassword: true });
    expect(granted(listener, guarded)).toEqual([]);
    expect(granted(password, guarded)).toEqual(ALL);
    expect(granted(password, player({ hasPassword: true, payment: { fulfillment: 'allow-access' } }))).toEqual([]);
    expect(granted(password, player({ hasPassword: true, payment: { fulfillment: 'allow-download' } }))).toEqual(['player:comment', 'player:stream', 'player:view']);
    // A password session means nothing on a player without a password, nor a purchase on one without a paywall.
    expect(granted(password, player())).toEqual([]);
    expect(granted(purchaser, player())).toEqual([]);
  });
});

describe('the door of a player (decideEntry) and what a paywall holds back (paywallHolds)', () => {
  const visitor = (over: Partial<Visitor> = {}): Visitor => ({ passwordGiven: false, paid: false, ...over });
  const open = (facts: ReturnType<typeof player>, expired = false) => ({ ...facts, expired });

  it('names the lock that stops a visitor: expired for everyone, collaborators-only, then the password', () => {
    expect(decideEntry(open(player(), true), visitor({ member: { kind: 'user', role: 'owner' } }))).toEqual({ allowed: false, lock: 'expired' });
    expect(decideEntry(open(player({ public: false })), visitor({ passwordGiven: true, paid: true }))).toEqual({ allowed: false, lock: 'collaborators' });
    expect(decideEntry(open(player({ hasPassword: true })), visitor({ paid: true }))).toEqual({ allowed: false, lock: 'password' });
  });

  it('lets members in by membership, and a link holder in as purchaser, password session or listener', () => {
    const member = { kind: 'collaborator', role: 'viewer' } as const;
    expect(decideEntry(open(player({ public: false, hasPassword: true })), visitor({ member }))).toEqual({ allowed: true, principal: member });
    const paywalled = player({ payment: { fulfillment: 'allow-access' } });
    expect(decideEntry(open(paywalled), visitor({ paid: true }))).toEqual({ allowed: true, principal: { kind: 'purchaser' } });
    expect(decideEntry(open(player({ hasPassword: true })), visitor({ passwordGiven: true }))).toEqual({ allowed: true, principal: { kind: 'password' } });
    expect(decideEntry(open(player()), visitor())).toEqual({ allowed: true, principal: { kind: 'listener' } });
    // A purchase means nothing on a player without a paywall.
    expect(decideEntry(open(player()), visitor({ paid: true }))).toEqual({ allowed: true, principal: { kind: 'listener' } });
  });

  it('holds back everything (allow-access) or the downloads (allow-download, downloads on) from who has not paid', () => {
    expect(paywallHolds(listener, player({ payment: { fulfillment: 'allow-access' } }))).toBe('everything');
    expect(paywallHolds(listener, player({ payment: { fulfillment: 'allow-download' } }))).toBe('downloads');
    expect(paywallHolds(listener, player({ downloads: false, payment: { fulfillment: 'allow-download' } }))).toBeUndefined();
    expect(paywallHolds(purchaser, player({ payment: { fulfillment: 'allow-access' } }))).toBeUndefined();
    expect(paywallHolds(collaborator('viewer'), player({ payment: { fulfillment: 'allow-access' } }))).toBeUndefined();
    expect(paywallHolds(listener, player())).toBeUndefined();
  });
});
