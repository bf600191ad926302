/**
 * The administration of accounts: `GET /admin/users`, `POST
 * /admin/users/{userid}`, `POST /admin/invitations`, for the server's
 * administrators only; the admin CLI does the same from the shell, through
 * the same functions.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { conflict, notFound } from '../../lib/problems.ts';
import { normalizeEmail } from '../account/user-repository.ts';
import type { AdminUserRecord } from './user-admin-repository.ts';
import { endSessionsOf } from '../sessions/session-service.ts';
import { queueMail } from '../mail/mail-outbox.ts';
import { invitationMail } from '../../mail/templates.ts';
import { actorOf, authorize } from '../../auth/authorize.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config'>;

/** How long an invitation works. */
export const INVITATION_MS = 7 * 24 * 3_600_000;

export function adminUserJson(user: AdminUserRecord, storageUsed: number): Schemas['AdminUser'] {
  return {
    id: user.id,
    object: 'user',
    email: user.email,
    ...(user.name !== null ? { name: user.name } : {}),
    admin: user.admin,
    disabled: user.disabled,
    emailVerified: user.emailVerified,
    storageQuota: user.storageQuota,
    storageUsed,
    timeCreated: user.timeCreated,
  };
}

const withUsage = async (store: Store, user: AdminUserRecord) => adminUserJson(user, await store.uploads.bytesOwnedBy(user.id));

/** Refuses anyone but an administrator whose account is not disabled (the policy's server:administer). */
export async function requireAdmin(ctx: Pick<Context, 'store'>, caller: Caller): Promise<void> {
  authorize(actorOf(caller, undefined), { permission: 'server:administer', account: await ctx.store.userAdmin.get(caller.id) });
}

export async function listUsers(ctx: Ports, caller: Caller): Promise<Schemas['AdminUser'][]> {
  await requireAdmin(ctx, caller);
  const users = await ctx.store.userAdmin.list();
  const listed: Schemas['AdminUser'][] = [];
  for (const user of users) listed.push(await withUsage(ctx.store, user));
  return listed;
}

export type UserChange = Schemas['UpdateUserRequest'];

/**
 * Applies the change to the account, in one transaction: the server keeps
 * at least one administrator who is not disabled (so that someone can
 * still administer it), and a disabled account's sessions end at once
 * (its tokens are refused while it is disabled, by the authentication).
 * Answers the account as it is now; throws 404 when there is none, 409 when
 * the change would leave no administrator.
 */
export async function changeUser(store: Store, userId: string, change: UserChange): Promise<AdminUserRecord> {
  return store.transaction(async (tx) => {
    const admins = await tx.userAdmin.lockActiveAdmins();
    const user = await tx.userAdmin.get(userId);
    if (!user) throw notFound(`There is no account ${userId}.`);
    const staysActiveAdmin = (change.admin ?? user.admin) && !(change.disabled ?? user.disabled);
    if (admins.includes(userId) && !staysActiveAdmin && admins.length === 1) {
      throw conflict(
        `${user.email} is the last administrator who is not disabled; the server must keep one. Make another account an administrator first.`,
      );
    }
    const changed = (await tx.userAdmin.update(userId, change))!;
    // The accounts rules: a session "is replaced on sign-in and whenever its privileges change": a change of administrator ends the
    // account's sessions, so that what it may do from now on starts with a sign-in of its own.
    const privilegesChanged = change.admin !== undefined && change.admin !== user.admin;
    if (change.disabled === true || privilegesChanged) await endSessionsOf({ store: tx }, userId);
    return changed;
  });
}

export async function updateUser(ctx: Ports, caller: Caller, userId: string, change: UserChange): Promise<Schemas['AdminUser']> {
  await requireAdmin(ctx, caller);
  return withUsage(ctx.store, await changeUser(ctx.store, userId, change));
}

/** An invitation's link: the sign-up page with its secret. */
const invitationUrl = (publicUrl: string, secret: string) => `${publicUrl}/signup?invite=${secret}`;

/** What mailing an invitation takes: the job queue's mail outbox (a server without SMTP_URL mails nothing). */
type MailPorts = Pick<Context, 'config' | 'clock' | 'secrets' | 'jobQueued'>;

/**
 * Makes an invitation to open an account with `email`, as an administrator
 * or not: a one-time link (kind `invitation`) that works for seven days.
 * `createdBy` is the administrator who made it; null from the admin CLI.
 * With `mail` on a server that sends mail, the link is mailed to the
 * address too, from the job queue (the accounts rules: "Mails: […] an invitation
 * (from an administrator […])"), queued in the transaction that makes the
 * link, so that there is never a mail without its link, nor the reverse.
 */
export async function invite(
  ctx: Ports,
  invitation: { email: string; admin: boolean; createdBy: string | null; invitedBy?: string },
  mail?: MailPorts,
): Promise<Schemas['Invitation']> {
  const email = normalizeEmail(invitation.email);
  if (await ctx.store.users.findByEmail(email)) throw conflict(`There is already an account with the address ${email}; it needs no invitation.`);
  return ctx.store.transaction(async (store) => {
    // Read by the sign-up (sessions/invitations.ts): the address it is for, and `admin`.
    const link = await store.oneTimeLinks.create('invitation', { email, data: { admin: invitation.admin }, createdBy: invitation.createdBy, ttlMs: INVITATION_MS }, ctx.clock.now());
    const url = invitationUrl(ctx.config.publicUrl, link.secret);
    const queued = mail ? await queueMail(mail, store, 'invitation', invitationMail({ to: email, invitedBy: invitation.invitedBy ?? '', url, validForMs: INVITATION_MS })) : undefined;
    return { id: link.id, object: 'invitation', email, admin: invitation.admin, url, expiresAt: link.expires, mailed: queued !== undefined };
  });
}

export async function createInvitation(ctx: Ports & MailPorts, caller: Caller, body: Schemas['CreateInvitationRequest']): Promise<Schemas['Invitation']> {
  await requireAdmin(ctx, caller);
  const inviter = await ctx.store.users.get(caller.id);
  return invite(ctx, { email: body.email, admin: body.admin ?? false, createdBy: caller.id, invitedBy: inviter?.name ?? inviter?.email ?? '' }, ctx);
}
