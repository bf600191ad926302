/**
 * Deleting an account for good (DELETE /me). The issue: it "deletes the
 * account with its projects, files (blobs included), players, tokens,
 * sessions and webhooks, and nothing of it is left."
 *
 * The rows go in one transaction (account-deletion-repository.ts says what
 * becomes of each reference); the bytes of its projects' files, renditions
 * and artwork go after the commit, so that a transaction that rolls back
 * leaves the files it still points at. Should the process stop between the
 * two, the blobs left belong to no record, and the upload sweep, which
 * removes such orphans, removes them.
 */
import type { Context } from '../../context.ts';
import { projectBlobPrefix } from '../../blobs/keys.ts';
import { badRequest, conflict, forbidden } from '../../lib/problems.ts';
import type { Caller } from '../../auth/access.ts';
import { attemptLimitsOf } from '../../auth/attempt-limits.ts';
import { verifyPassword } from '../../auth/passwords.ts';
import { normalizeEmail } from './user-repository.ts';

type Ports = Pick<Context, 'store' | 'blobs' | 'logger'>;

/**
 * Deletes the account and everything it owns; false when there is no such
 * account. The server's last administrator who is not disabled is not
 * deleted (409): someone must still be able to administer it, as when an
 * administrator steps down (POST /admin/users/{userid}).
 */
export async function deleteAccount(ctx: Ports, userId: string): Promise<boolean> {
  const deleted = await ctx.store.transaction(async (store) => {
    const admins = await store.userAdmin.lockActiveAdmins();
    if (admins.length === 1 && admins[0] === userId) {
      throw conflict('You are the last administrator of this server, so your account cannot be deleted: make another account an administrator first.');
    }
    return store.accountDeletion.deleteAccount(userId);
  });
  if (!deleted) return false;
  for (const projectId of deleted.projectIds) await removeBlobsOf(ctx, projectId);
  return true;
}

/** Every blob under the project's prefix: originals, renditions, peaks and artwork. */
async function removeBlobsOf(ctx: Ports, projectId: string): Promise<void> {
  const keys: string[] = [];
  for await (const key of ctx.blobs.list(projectBlobPrefix(projectId))) keys.push(key);
  for (const key of keys) {
    await ctx.blobs.delete(key).catch((error: unknown) => ctx.logger.warn('removing a blob of a deleted account failed; the upload sweep removes it later', { err: error, key }));
  }
}

/** How the request proved who it is, as far as deleting the account is concerned (the request's `auth`). */
export interface DeletionProof {
  kind: 'session' | 'token';
  /** How the session's person signed in (password, passkey…). */
  method?: string;
  /** When the session's person signed in. */
  timeAuthenticated: number;
}

/** How long after a passkey sign-in the account may be deleted without its password. */
export const PASSKEY_GRACE_MS = 5 * 60_000;

/**
 * Checks that the caller may delete the account: a signed-in session (a
 * token, which may have leaked, never deletes an account), and either the
 * account's password or a passkey sign-in less than five minutes old. The
 * issue: "`DELETE /me` with `{"password": …}` (or within five minutes of a
 * passkey sign-in)". Wrong passwords count against the account's and the
 * address's failed attempts, as at sign-in, so that a session left open
 * cannot be used to guess the password. Throws the problem to answer.
 */
export async function confirmDeletion(
  ctx: Pick<Context, 'store' | 'clock'>,
  caller: Caller,
  proof: DeletionProof | undefined,
  password: string | undefined,
  address: string,
): Promise<void> {
  if (proof?.kind !== 'session') {
    throw forbidden('An account is deleted only from a signed-in session, never with a token, so that a leaked token cannot remove it. Sign in at /signin and delete it in Settings.');
  }
  if (password === undefined) {
    if (proof.method === 'passkey' && ctx.clock.now() - proof.timeAuthenticated <= PASSKEY_GRACE_MS) return;
    throw badRequest('Give your password to delete your account (or sign in with a passkey again, and delete it within five minutes).', [
      { pointer: '#/password', detail: 'is required, unless you signed in with a passkey less than five minutes ago' },
    ]);
  }
  const attempt = { account: normalizeEmail(caller.email), address };
  // Reserved before argon2 runs, given back when the password is right (attempt-limits.ts): requests sent at once
  // cannot all be checked against a count that none of them has added to yet.
  await attemptLimitsOf(ctx.store.db).attempt(attempt, async (reservation) => {
    if (!(await verifyPassword((await ctx.store.users.get(caller.id))?.passwordHash ?? null, password))) {
      reservation.failed();
      throw forbidden('The password is not right, so the account was not deleted. Try again, or reset your password from the sign-in page.');
    }
    await reservation.succeeded();
  });
}
