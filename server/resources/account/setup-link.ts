/**
 * The first account's one-time link. The accounts rules: "On a database with no
 * account, `npm start` prints, right after its address, a one-time link:
 * `Create the first account: <PUBLIC_URL>/setup?token=…`". Each new link ends
 * the ones before, so only the last one printed works.
 */
import type { Context } from '../../context.ts';

/** A week: long enough to come back to, short enough that a forgotten terminal log is not a key for ever. */
export const SETUP_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A new setup link, or undefined when the server has an account already (then there is nothing to set up). */
export async function createSetupLink(ctx: Pick<Context, 'store' | 'clock' | 'config'>): Promise<string | undefined> {
  if (await ctx.store.users.any()) return undefined;
  const now = ctx.clock.now();
  await ctx.store.oneTimeLinks.revokeAll('setup', null, now);
  const { secret } = await ctx.store.oneTimeLinks.create('setup', { ttlMs: SETUP_LINK_TTL_MS }, now);
  return `${ctx.config.publicUrl}/setup?token=${secret}`;
}
