/**
 * The first account's setup link. The issue: "On a database with no
 * account, `npm start` prints, right after its address, a one-time link:
 * `Create the first account: <PUBLIC_URL>/setup?token=…`. [...] The link
 * works once; the admin CLI can print a new one." The start banner and the
 * admin CLI (`setup-link`) both make it here.
 */
import type { Store } from '../../repositories.ts';
import type { Clock } from '../../lib/clock.ts';

/** How long a setup link works: long enough to open it after a night, short enough that an old log's link is dead. */
export const SETUP_LINK_MS = 24 * 3_600_000;

/**
 * A new setup link (a one-time link of kind `setup`, its secret only in the
 * URL), or undefined when the server has an account already: the setup
 * page makes the first account, never another. Earlier links keep working
 * until they expire or one of them is used.
 */
export async function createSetupLink(store: Store, clock: Clock, publicUrl: string): Promise<{ url: string; expiresAt: number } | undefined> {
  if ((await store.userAdmin.countUsers()) > 0) return undefined;
  const now = clock.now();
  const expiresAt = now + SETUP_LINK_MS;
  const link = await store.userAdmin.createLink({ kind: 'setup', email: null, userId: null, data: {}, createdBy: null, timeExpires: expiresAt }, now);
  return { url: `${publicUrl}/setup?token=${link.secret}`, expiresAt };
}
