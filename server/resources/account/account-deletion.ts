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
import { badRequest, forbidden } from '../../http/problem.ts';

type Ports = Pick<Context, 'store' | 'blobs' | 'logger'>;

/** Deletes the account and everything it owns; false when there is no such account. */
export async function deleteAccount(ctx: Ports, userId: string): Promise<boolean> {
  const deleted = await ctx.store.transaction((store) => store.accountDeletion.deleteAccount(userId));
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

/** How the request proved who it is, as far as deleting the account is concerned. */
export interface DeletionProof {
  /** The password in the request, if any. */
  password: string | undefined;
  /** The session's sign-in method and when it began; undefined for a bearer token. */
  session: { method: string; timeCreated: number } | undefined;
}

/** How long after a passkey sign-in the account may be deleted without its password. */
export const PASSKEY_GRACE_MS = 5 * 60_000;

/**
 * Checks that the caller may delete the account: a signed-in session (a
 * token, which may have leaked, never deletes an account), and either the
 * account's password or a passkey sign-in less than five minutes old. The
 * issue: "`DELETE /me` with `{"password": …}` (or within five minutes of a
 * passkey sign-in)". Throws the problem to answer otherwise.
 */
export async function confirmDeletion(
  ctx: Pick<Context, 'store' | 'clock'>,
  userId: string,
  proof: DeletionProof,
  verifyPassword: (hash: string, password: string) => Promise<boolean>,
): Promise<void> {
  if (!proof.session) {
    throw forbidden('An account is deleted only from a signed-in session, never with a token, so that a leaked token cannot remove it. Sign in at /signin and delete it in Settings.');
  }
  if (proof.password === undefined) {
    if (proof.session.method === 'passkey' && ctx.clock.now() - proof.session.timeCreated <= PASSKEY_GRACE_MS) return;
    throw badRequest('Give your password to delete your account (or sign in with a passkey again, and delete it within five minutes).', [
      { pointer: '#/password', detail: 'is required, unless you signed in with a passkey less than five minutes ago' },
    ]);
  }
  const hash = await ctx.store.accountDeletion.passwordHashOf(userId);
  if (!hash || !(await verifyPassword(hash, proof.password))) {
    throw forbidden('The password is not right, so the account was not deleted.');
  }
}
